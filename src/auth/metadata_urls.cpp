#include "auth/metadata_urls.hpp"

#include "mcpclass/auth/oauth.hpp"

#include <boost/url.hpp>

#include <algorithm>
#include <cctype>

namespace mcpclass::auth {

namespace urls = boost::urls;

namespace {

urls::url parse(std::string_view text) {
  auto parsed = urls::parse_uri(text);
  if (!parsed) throw AuthorizationError("metadata discovery", 0, "invalid_url", std::string(text));
  return urls::url(*parsed);
}

std::string lower(std::string s) {
  std::ranges::transform(s, s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

/// The path without trailing slashes ("" for the root).
std::string trimmed_path(const urls::url& u) {
  std::string path(u.encoded_path());
  while (!path.empty() && path.back() == '/') path.pop_back();
  return path;
}

}  // namespace

std::string origin_of(std::string_view url) {
  const auto u = parse(url);
  std::string out = lower(std::string(u.scheme())) + "://" + lower(std::string(u.encoded_host()));
  if (u.has_port()) out += ":" + std::string(u.port());
  return out;
}

std::string canonical_resource(std::string_view server_url) {
  const auto u = parse(server_url);
  std::string path(u.encoded_path());
  return origin_of(server_url) + path;
}

std::vector<std::string> protected_resource_metadata_urls(std::string_view server_url) {
  const auto u = parse(server_url);
  const std::string origin = origin_of(server_url);
  const std::string path = trimmed_path(u);
  std::vector<std::string> out;
  if (!path.empty()) out.push_back(origin + "/.well-known/oauth-protected-resource" + path);
  out.push_back(origin + "/.well-known/oauth-protected-resource");
  return out;
}

std::vector<std::string> authorization_server_metadata_urls(std::string_view issuer) {
  const auto u = parse(issuer);
  const std::string origin = origin_of(issuer);
  const std::string path = trimmed_path(u);
  if (path.empty())
    return {origin + "/.well-known/oauth-authorization-server",
            origin + "/.well-known/openid-configuration"};
  return {origin + "/.well-known/oauth-authorization-server" + path,
          origin + "/.well-known/openid-configuration" + path,
          origin + path + "/.well-known/openid-configuration"};
}

bool resource_covers(std::string_view resource, std::string_view server_url) {
  if (origin_of(resource) != origin_of(server_url)) return false;
  std::string want = trimmed_path(parse(resource)) + "/";
  std::string have = trimmed_path(parse(server_url)) + "/";
  return have.starts_with(want);
}

std::string form_encode(const std::vector<std::pair<std::string, std::string>>& fields) {
  // Everything but the RFC 3986 unreserved characters is escaped: form decoders read `+` as a
  // space, so it must not pass through as is.
  static constexpr char hex[] = "0123456789ABCDEF";
  auto escape = [](std::string& out, std::string_view text) {
    for (unsigned char c : text) {
      if (std::isalnum(c) != 0 || c == '-' || c == '.' || c == '_' || c == '~') {
        out += static_cast<char>(c);
      } else {
        out += '%';
        out += hex[c >> 4];
        out += hex[c & 15];
      }
    }
  };
  std::string out;
  for (const auto& [k, v] : fields) {
    if (!out.empty()) out += '&';
    escape(out, k);
    out += '=';
    escape(out, v);
  }
  return out;
}

std::string with_query(std::string_view url,
                       const std::vector<std::pair<std::string, std::string>>& params) {
  const auto fragment = url.find('#');
  std::string out(url.substr(0, fragment));
  out += out.find('?') == std::string::npos ? '?' : '&';
  out += form_encode(params);
  return out;
}

namespace {

// application/x-www-form-urlencoded decoding: "+" is a space, %XX a byte; a malformed escape
// stays as written.
std::string form_decode(std::string_view s) {
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '+') {
      out.push_back(' ');
    } else if (s[i] == '%' && i + 2 < s.size() && hex(s[i + 1]) >= 0 && hex(s[i + 2]) >= 0) {
      out.push_back(static_cast<char>(hex(s[i + 1]) * 16 + hex(s[i + 2])));
      i += 2;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

}  // namespace

// Read by hand: Boost.URL 1.81's params() iteration reads out of bounds on some URLs with an
// empty query and a fragment (found by fuzz_oauth), and this runs on a callback URL.
std::string query_param(std::string_view url, std::string_view name) {
  url = url.substr(0, url.find('#'));
  const auto mark = url.find('?');
  if (mark == std::string_view::npos) return {};
  std::string_view query = url.substr(mark + 1);
  while (true) {
    const auto amp = query.find('&');
    const std::string_view item = query.substr(0, amp);
    const auto eq = item.find('=');
    if (form_decode(item.substr(0, eq)) == name)
      return eq == std::string_view::npos ? std::string() : form_decode(item.substr(eq + 1));
    if (amp == std::string_view::npos) return {};
    query.remove_prefix(amp + 1);
  }
}

}  // namespace mcpclass::auth
