// The validator's configuration checks, the metadata document and the challenges.
#include "transport/server/jwt/validator.hpp"

#include <boost/json.hpp>
#include <boost/url/parse.hpp>

#include <algorithm>
#include <stdexcept>

namespace mcpclass::transport::server::jwt {

namespace json = boost::json;

namespace {

// A quoted-string value of a challenge parameter (RFC 9110 §5.6.4): no quotes, backslashes or
// control characters survive into the header.
std::string quoted(std::string_view s) {
  std::string out = "\"";
  for (const char c : s.substr(0, 200)) {
    if (c == '"' || c == '\\') out.push_back('\\');
    if (static_cast<unsigned char>(c) >= 0x20 && c != 0x7F) out.push_back(c);
  }
  return out + "\"";
}

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : " ") + s;
  return out;
}

}  // namespace

Validator::Validator(JwtAuthOptions options) : options_(std::move(options)) {
  const auto url = boost::urls::parse_absolute_uri(options_.resource);
  if (!url || (url->scheme() != "https" && url->scheme() != "http") || url->host().empty() ||
      url->has_fragment())
    throw std::runtime_error("JWT: resource '" + options_.resource +
                             "' is not an absolute http(s) URL without a fragment");
  if (options_.issuer.empty()) throw std::runtime_error("JWT: issuer must be set");
  if (options_.max_token_bytes == 0) throw std::runtime_error("JWT: max_token_bytes must be > 0");
  checks_.issuer = options_.issuer;
  checks_.audiences =
      options_.audiences.empty() ? std::vector<std::string>{options_.resource} : options_.audiences;
  checks_.leeway = options_.leeway;
  checks_.max_token_bytes = options_.max_token_bytes;
  keys_ = std::make_unique<KeySource>(options_);

  std::string path(url->encoded_path());
  if (path == "/") path.clear();
  metadata_path_ = "/.well-known/oauth-protected-resource" + path;
  metadata_url_ =
      std::string(url->scheme()) + "://" + std::string(url->encoded_authority()) + metadata_path_;
  std::set<std::string> supported(options_.required_scopes.begin(), options_.required_scopes.end());
  for (const auto& [tool, scopes] : options_.tool_scopes)
    supported.insert(scopes.begin(), scopes.end());
  json::array servers;
  for (const auto& s : options_.authorization_servers.empty()
                           ? std::vector<std::string>{options_.issuer}
                           : options_.authorization_servers)
    servers.emplace_back(s);
  json::array scopes;
  for (const auto& s : supported) scopes.emplace_back(s);
  metadata_json_ =
      json::serialize(json::object{{"resource", options_.resource},
                                   {"authorization_servers", std::move(servers)},
                                   {"scopes_supported", std::move(scopes)},
                                   {"bearer_methods_supported", json::array{"header"}}});
}

std::set<std::string> Validator::validate(std::string_view token,
                                          std::chrono::system_clock::time_point now) const {
  const KeyLookup lookup = [this](std::string_view kid) { return keys_->find(kid); };
  return verify_token(token, lookup, checks_, now).scopes;
}

std::vector<std::string> Validator::scopes_for(std::string_view tool) const {
  std::vector<std::string> needed = options_.required_scopes;
  if (const auto it = options_.tool_scopes.find(std::string(tool));
      it != options_.tool_scopes.end())
    for (const auto& s : it->second)
      if (std::find(needed.begin(), needed.end(), s) == needed.end()) needed.push_back(s);
  return needed;
}

std::vector<std::string> Validator::missing(const std::vector<std::string>& needed,
                                            const std::set<std::string>& granted) {
  std::vector<std::string> out;
  for (const auto& s : needed)
    if (!granted.contains(s)) out.push_back(s);
  return out;
}

std::string Validator::unauthorized_challenge(std::string_view description) const {
  std::string out = "Bearer resource_metadata=" + quoted(metadata_url_);
  if (!options_.required_scopes.empty())
    out += ", scope=" + quoted(joined(options_.required_scopes));
  if (!description.empty())
    out += ", error=\"invalid_token\", error_description=" + quoted(description);
  return out;
}

std::string Validator::insufficient_scope_challenge(const std::vector<std::string>& needed) const {
  return "Bearer error=\"insufficient_scope\", scope=" + quoted(joined(needed)) +
         ", resource_metadata=" + quoted(metadata_url_);
}

}  // namespace mcpclass::transport::server::jwt
