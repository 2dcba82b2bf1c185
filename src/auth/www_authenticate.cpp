#include "auth/www_authenticate.hpp"

#include <cctype>

namespace mcpclass::auth {

namespace {

bool is_token_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 ||
         std::string_view("!#$%&'*+-.^_`|~/").find(c) != std::string_view::npos;
}

/// A cursor over the header: challenges are `scheme [param *("," param)]`, separated by commas
/// too, so a token not followed by `=` starts the next challenge.
struct Reader {
  std::string_view s;
  std::size_t i = 0;

  void skip_space_and_commas() {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == ',')) ++i;
  }
  void skip_space() {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
  }
  std::string_view token() {
    const auto start = i;
    while (i < s.size() && is_token_char(s[i])) ++i;
    return s.substr(start, i - start);
  }
  /// A quoted-string (backslash escapes) or a token (token68 padding included).
  bool value(std::string& out) {
    if (i < s.size() && s[i] == '"') {
      ++i;
      while (i < s.size() && s[i] != '"') {
        if (s[i] == '\\' && i + 1 < s.size()) ++i;
        out += s[i++];
      }
      if (i >= s.size()) return false;  // unterminated
      ++i;
      return true;
    }
    out = token();
    while (i < s.size() && s[i] == '=') out += s[i++];
    return true;
  }
};

}  // namespace

bool equals_ignoring_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  return true;
}

BearerChallenge parse_www_authenticate(std::string_view header) {
  BearerChallenge out;
  Reader r{header};
  bool in_bearer = false;
  while (true) {
    r.skip_space_and_commas();
    if (r.i >= header.size()) break;
    const auto name = r.token();
    if (name.empty()) break;  // not a token: malformed
    r.skip_space();
    if (r.i >= header.size() || header[r.i] != '=') {
      in_bearer = equals_ignoring_case(name, "Bearer");  // a new challenge
      if (in_bearer) out.bearer = true;
      continue;
    }
    ++r.i;
    r.skip_space();
    std::string value;
    if (!r.value(value)) break;
    if (!in_bearer) continue;
    if (equals_ignoring_case(name, "error"))
      out.error = value;
    else if (equals_ignoring_case(name, "error_description"))
      out.error_description = value;
    else if (equals_ignoring_case(name, "scope"))
      out.scope = value;
    else if (equals_ignoring_case(name, "resource_metadata"))
      out.resource_metadata = value;
  }
  return out;
}

}  // namespace mcpclass::auth
