// The `classifier.remote.auth` section: strict reading, a secret-free dump, and the transport's
// OAuth options.
#include "mcpclass/auth/oauth.hpp"
#include "mcpclass/remote/remote_classifier.hpp"
#include "mcpclass/transport/client/http.hpp"
#include "util/config_reader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <fstream>
#include <sstream>

namespace mcpclass::remote {

namespace {

template <std::size_t N>
void one_of(const std::string& value, const std::array<const char*, N>& allowed,
            const std::string& path) {
  if (std::find(allowed.begin(), allowed.end(), value) != allowed.end()) return;
  std::string list;
  for (const char* a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
  util::strict::fail(path, fmt::format("must be one of {} (got '{}')", list, value));
}

}  // namespace

RemoteAuthOptions RemoteAuthOptions::from_json(const json::value& v, const std::string& path) {
  util::strict::ObjectReader r(v, path);
  RemoteAuthOptions o;
  o.grant = r.string("grant").value_or(o.grant);
  one_of(o.grant, std::array{"client_credentials", "authorization_code"}, r.path_of("grant"));
  o.client_id = r.string("client_id").value_or("");
  o.client_secret = r.string("client_secret").value_or("");
  o.private_key_file = r.string("private_key_file").value_or("");
  o.signing_algorithm = r.string("signing_algorithm").value_or(o.signing_algorithm);
  one_of(o.signing_algorithm, std::array{"ES256", "RS256"}, r.path_of("signing_algorithm"));
  o.token_endpoint_auth_method = r.string("token_endpoint_auth_method").value_or("");
  if (!o.token_endpoint_auth_method.empty())
    one_of(o.token_endpoint_auth_method,
           std::array{"client_secret_basic", "client_secret_post", "private_key_jwt", "none"},
           r.path_of("token_endpoint_auth_method"));
  o.scope = r.string("scope").value_or("");
  o.client_metadata_url = r.string("client_metadata_url").value_or("");
  o.redirect_uri = r.string("redirect_uri").value_or("");
  if (const auto n = r.integer("max_attempts")) {
    if (*n < 1 || *n > 10) util::strict::fail(r.path_of("max_attempts"), "must be within [1, 10]");
    o.max_attempts = static_cast<int>(*n);
  }
  o.require_https = r.boolean("require_https").value_or(o.require_https);
  o.allowed_authorization_servers =
      r.string_list("allowed_authorization_servers").value_or(std::vector<std::string>{});
  r.finish();
  if (!o.client_secret.empty() && !o.private_key_file.empty())
    util::strict::fail(r.path_of("private_key_file"),
                       "give either client_secret or private_key_file");
  if (o.grant == "client_credentials" && o.client_id.empty())
    util::strict::fail(r.path_of("client_id"), "required for the client_credentials grant");
  if (o.grant == "client_credentials" && o.client_secret.empty() && o.private_key_file.empty())
    util::strict::fail(r.path_of("client_secret"),
                       "the client_credentials grant needs client_secret or private_key_file");
  if (o.token_endpoint_auth_method == "private_key_jwt" && o.private_key_file.empty())
    util::strict::fail(r.path_of("private_key_file"), "required for private_key_jwt");
  return o;
}

json::object RemoteAuthOptions::to_json() const {
  json::object o{{"grant", grant},
                 {"signing_algorithm", signing_algorithm},
                 {"max_attempts", max_attempts},
                 {"require_https", require_https}};
  if (!client_id.empty()) o["client_id"] = client_id;
  if (!client_secret.empty())
    o["client_secret"] = client_secret.find("${") != std::string::npos ? client_secret : "***";
  if (!private_key_file.empty()) o["private_key_file"] = private_key_file;
  if (!token_endpoint_auth_method.empty())
    o["token_endpoint_auth_method"] = token_endpoint_auth_method;
  if (!scope.empty()) o["scope"] = scope;
  if (!client_metadata_url.empty()) o["client_metadata_url"] = client_metadata_url;
  if (!redirect_uri.empty()) o["redirect_uri"] = redirect_uri;
  if (!allowed_authorization_servers.empty()) {
    json::array servers;
    for (const auto& s : allowed_authorization_servers) servers.push_back(json::string(s));
    o["allowed_authorization_servers"] = std::move(servers);
  }
  return o;
}

auth::OAuthOptions RemoteAuthOptions::to_oauth(std::chrono::milliseconds timeout) const {
  auth::OAuthOptions o;
  o.grant = grant == "authorization_code" ? auth::OAuthOptions::Grant::authorization_code
                                          : auth::OAuthOptions::Grant::client_credentials;
  try {
    o.client_id = transport::client::expand_env(client_id);
    o.client_secret = transport::client::expand_env(client_secret);
  } catch (const std::exception& e) {
    throw classify::ConfigError("auth", e.what());
  }
  if (!private_key_file.empty()) {
    std::ifstream in(private_key_file, std::ios::binary);
    std::ostringstream pem;
    pem << in.rdbuf();
    if (!in || pem.str().empty())
      throw classify::ConfigError(
          "auth.private_key_file",
          fmt::format("cannot read the private key file '{}'", private_key_file));
    o.private_key_pem = pem.str();
  }
  o.signing_algorithm = signing_algorithm;
  o.token_endpoint_auth_method = token_endpoint_auth_method;
  o.scope = scope;
  o.client_metadata_url = client_metadata_url;
  if (!redirect_uri.empty()) o.redirect_uri = redirect_uri;
  o.max_attempts = max_attempts;
  o.require_https = require_https;
  o.allowed_authorization_servers = allowed_authorization_servers;
  o.timeout = timeout;
  return o;
}

}  // namespace mcpclass::remote
