// Host/Origin, token and media type checks.
#include "transport/server/http/guard.hpp"

#include <algorithm>
#include <string>

namespace mcpclass::transport::server {

namespace {

// ASCII only, as HTTP's tokens are; std::tolower is a call per byte that consults the locale.
char ascii_lower(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return ascii_lower(x) == ascii_lower(y);
         });
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// The media type of a header element without parameters.
std::string_view bare_type(std::string_view element) {
  return trim(element.substr(0, element.find(';')));
}

}  // namespace

std::string_view host_without_port(std::string_view authority) {
  authority = trim(authority);
  if (!authority.empty() && authority.front() == '[') {
    const auto close = authority.find(']');
    return close == std::string_view::npos ? authority : authority.substr(0, close + 1);
  }
  const auto colon = authority.find(':');
  return colon == std::string_view::npos ? authority : authority.substr(0, colon);
}

bool is_local_host(std::string_view host) {
  return iequals(host, "localhost") || host == "127.0.0.1" || host == "[::1]" || host == "::1";
}

bool host_allowed(std::string_view host_header, const std::vector<std::string>& allowed) {
  const std::string_view host = host_without_port(host_header);
  if (host.empty()) return false;
  if (is_local_host(host)) return true;
  return std::any_of(allowed.begin(), allowed.end(), [&](const std::string& a) {
    return a == "*" || iequals(host_without_port(a), host);
  });
}

bool origin_allowed(std::string_view origin, const std::vector<std::string>& allowed) {
  origin = trim(origin);
  if (origin.empty()) return true;
  // scheme://authority
  const auto sep = origin.find("://");
  const std::string_view authority =
      sep == std::string_view::npos ? std::string_view() : origin.substr(sep + 3);
  const std::string_view host = host_without_port(authority.substr(0, authority.find('/')));
  if (!host.empty() && is_local_host(host)) return true;
  return std::any_of(allowed.begin(), allowed.end(), [&](const std::string& a) {
    if (a == "*") return true;
    if (a.find("://") != std::string::npos) return iequals(a, origin);
    return !host.empty() && iequals(host_without_port(a), host);
  });
}

bool bearer_matches(std::string_view authorization, std::string_view expected) {
  authorization = trim(authorization);
  constexpr std::string_view kScheme = "bearer ";
  if (authorization.size() < kScheme.size() ||
      !iequals(authorization.substr(0, kScheme.size()), kScheme)) {
    return false;
  }
  const std::string_view given = trim(authorization.substr(kScheme.size()));
  // Constant time in the length of the expected token; the length itself is not secret.
  unsigned char diff = given.size() == expected.size() ? 0 : 1;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const unsigned char g = i < given.size() ? static_cast<unsigned char>(given[i]) : 0;
    diff |= static_cast<unsigned char>(g ^ static_cast<unsigned char>(expected[i]));
  }
  return diff == 0 && !expected.empty();
}

bool bearer_matches_any(std::string_view authorization, const std::vector<std::string>& tokens) {
  bool any = false;
  for (const auto& token : tokens) any |= bearer_matches(authorization, token);
  return any;
}

bool media_type_is(std::string_view content_type, std::string_view type) {
  return iequals(bare_type(content_type), type);
}

bool accepts(std::string_view accept, std::string_view type) {
  accept = trim(accept);
  if (accept.empty()) return true;
  const std::string_view major = type.substr(0, type.find('/'));
  while (!accept.empty()) {
    const auto comma = accept.find(',');
    const std::string_view element = bare_type(accept.substr(0, comma));
    if (element == "*/*" || iequals(element, type)) return true;
    if (element.size() == major.size() + 2 && iequals(element.substr(0, major.size()), major) &&
        element.substr(major.size()) == "/*") {
      return true;
    }
    if (comma == std::string_view::npos) break;
    accept.remove_prefix(comma + 1);
  }
  return false;
}

bool lists_event_stream(std::string_view accept) {
  constexpr std::string_view kType = "text/event-stream";
  for (std::size_t i = 0; i + kType.size() <= accept.size(); ++i)
    if (iequals(accept.substr(i, kType.size()), kType)) return true;
  return false;
}

}  // namespace mcpclass::transport::server
