#include "transport/server/jwt_auth_config.hpp"

#include "util/config_reader.hpp"

#include <chrono>

namespace mcpclass::transport::server::detail {

namespace strict = util::strict;
namespace json = boost::json;

namespace {

// A string or a list of strings.
std::vector<std::string> one_or_more(strict::ObjectReader& r, std::string_view key) {
  const json::value* v = r.get(key);
  if (!v) return {};
  if (v->is_string()) return {std::string(v->get_string())};
  return strict::as_string_list(*v, r.path_of(key));
}

bool is_http_url(const std::string& s) {
  return s.starts_with("https://") || s.starts_with("http://");
}

void check_scopes(const std::vector<std::string>& list, const std::string& where) {
  for (const auto& s : list)
    if (s.empty() || s.find_first_of(" \"\\") != std::string::npos)
      strict::fail(where, "'" + s + "' is not a scope (no spaces, quotes or backslashes)");
}

// `scopes: {default: [...], tools: {classify_text: [...], ...}}`
void read_scopes(const json::value& v, const std::string& path, JwtAuthOptions& jwt) {
  strict::ObjectReader sc(v, path);
  jwt.required_scopes = sc.string_list("default").value_or(std::vector<std::string>{});
  check_scopes(jwt.required_scopes, sc.path_of("default"));
  if (const auto* tools = sc.get("tools")) {
    const std::string tools_path = sc.path_of("tools");
    for (const auto& [name, list] : strict::as_object(*tools, tools_path)) {
      const std::string where = strict::member_path(tools_path, name);
      auto& scopes = jwt.tool_scopes[std::string(name)];
      scopes = strict::as_string_list(list, where);
      check_scopes(scopes, where);
    }
  }
  sc.finish();
}

}  // namespace

JwtAuthOptions read_jwt_auth_options(const json::value& section, const std::string& path) {
  strict::ObjectReader j(section, path);
  JwtAuthOptions jwt;
  auto url = [&](std::string_view key, bool required) {
    auto value = j.string(key).value_or("");
    if (value.empty() && required) strict::fail(j.path_of(key), "is required");
    if (!value.empty() && !is_http_url(value))
      strict::fail(j.path_of(key), "must be an https:// (or http://) URL");
    return value;
  };
  jwt.resource = url("resource", true);
  if (jwt.resource.find('#') != std::string::npos)
    strict::fail(j.path_of("resource"), "must not have a fragment");
  jwt.issuer = j.string("issuer").value_or("");
  if (jwt.issuer.empty()) strict::fail(j.path_of("issuer"), "is required");
  jwt.authorization_servers =
      j.string_list("authorization_servers").value_or(std::vector<std::string>{});
  for (const auto& s : jwt.authorization_servers)
    if (!is_http_url(s))
      strict::fail(j.path_of("authorization_servers"), "'" + s + "' is not an https:// URL");
  jwt.audiences = one_or_more(j, "audience");
  for (const auto& a : jwt.audiences)
    if (a.empty()) strict::fail(j.path_of("audience"), "must not be empty");
  jwt.jwks_file = j.string("jwks_file").value_or("");
  jwt.jwks_url = url("jwks_url", false);
  if (jwt.jwks_file.empty() == jwt.jwks_url.empty())
    strict::fail(path, "needs exactly one of jwks_file and jwks_url");
  jwt.jwks_ca_file = j.string("jwks_ca_file").value_or("");
  jwt.jwks_timeout = j.seconds("jwks_timeout", false).value_or(jwt.jwks_timeout);
  jwt.jwks_refetch_interval =
      j.seconds("jwks_refetch_interval", true).value_or(jwt.jwks_refetch_interval);
  jwt.jwks_max_age = j.seconds("jwks_max_age", false).value_or(jwt.jwks_max_age);
  jwt.max_jwks_bytes = j.count("max_jwks_bytes", 1, 64 * 1024 * 1024).value_or(jwt.max_jwks_bytes);
  jwt.max_jwks_keys = j.count("max_jwks_keys", 1, 10'000).value_or(jwt.max_jwks_keys);
  if (const auto leeway = j.seconds("leeway", true))
    jwt.leeway = std::chrono::duration_cast<std::chrono::seconds>(*leeway);
  jwt.max_token_bytes = j.count("max_token_bytes", 64, 1024 * 1024).value_or(jwt.max_token_bytes);
  if (const auto* scopes = j.get("scopes")) read_scopes(*scopes, j.path_of("scopes"), jwt);
  j.finish();
  return jwt;
}

}  // namespace mcpclass::transport::server::detail
