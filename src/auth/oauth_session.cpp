#include "auth/oauth_session.hpp"

#include "auth/client_assertion.hpp"
#include "auth/metadata_urls.hpp"
#include "auth/pkce.hpp"
#include "auth/token_answer.hpp"
#include "auth/www_authenticate.hpp"
#include "mcpclass/util/json_fields.hpp"
#include "net/http_client.hpp"
#include "util/excerpt.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <future>

namespace mcpclass::auth {

namespace json = boost::json;
using net::HttpEngine;
using net::HttpRequest;
using util::excerpt;
using Fields = std::vector<std::pair<std::string, std::string>>;

namespace {

using util::string_or_empty;

bool array_has(const json::value* array, std::string_view item) {
  if (array == nullptr || !array->is_array()) return false;
  for (const auto& v : array->get_array())
    if (v.is_string() && v.get_string() == item) return true;
  return false;
}

/// An error answer of the authorization server: its `error` and `error_description` when the
/// body is the RFC 6749 JSON, else the body itself as the description.
[[noreturn]] void throw_answer(const std::string& step, int status, const std::string& body) {
  std::error_code ec;
  auto v = json::parse(body, ec);
  if (!ec && v.is_object())
    throw AuthorizationError(step, status, string_or_empty(v.get_object(), "error"),
                             string_or_empty(v.get_object(), "error_description"));
  throw AuthorizationError(step, status, "", excerpt(body));
}

}  // namespace

OAuthSession::OAuthSession(OAuthOptions options, std::string server_url,
                           std::chrono::milliseconds connect_timeout, std::string ca_file)
    : options_(std::move(options)),
      server_url_(std::move(server_url)),
      engine_(std::make_unique<HttpEngine>(connect_timeout, std::move(ca_file))),
      client_id_(options_.client_id),
      client_secret_(options_.client_secret) {}

OAuthSession::~OAuthSession() {
  stop();
}

void OAuthSession::stop() {
  {
    std::lock_guard lock(token_mutex_);
    stopped_ = true;
  }
  engine_->stop();
}

std::string OAuthSession::authorization() const {
  std::lock_guard lock(token_mutex_);
  return access_token_.empty() ? std::string() : "Bearer " + access_token_;
}

void OAuthSession::renew_if_expired() {
  {
    std::lock_guard lock(token_mutex_);
    if (stopped_ || !expires_at_ || std::chrono::steady_clock::now() < *expires_at_) return;
  }
  std::lock_guard flow(flow_mutex_);
  {
    std::lock_guard lock(token_mutex_);  // renewed while this thread waited for the flow lock
    if (!expires_at_ || std::chrono::steady_clock::now() < *expires_at_) return;
  }
  try {
    if (refresh()) return;
    if (options_.grant == OAuthOptions::Grant::client_credentials && discovered_)
      client_credentials_flow(options_.scope);
  } catch (const std::exception&) {
    // The request goes out with the old token; its 401 starts a full flow.
  }
}

void OAuthSession::check_secure(const std::string& step, const std::string& url) const {
  const auto target = net::parse_http_url(url);
  if (target.tls || !options_.require_https) return;
  if (net::is_loopback_host(target.host)) return;
  throw AuthorizationError(step, 0, "insecure_endpoint",
                           url + " is not https (set require_https = false to allow it)");
}

OAuthSession::Reply OAuthSession::http(const std::string& step, const std::string& method,
                                       const std::string& url, const std::string& content_type,
                                       const std::string& body, const std::string& authorization) {
  net::HttpUrl target;
  try {
    target = net::parse_http_url(url);
  } catch (const std::exception& e) {
    throw AuthorizationError(step, 0, "invalid_url", e.what());
  }
  check_secure(step, url);
  HttpRequest req;
  req.method = method;
  req.target = target.target;
  req.headers.emplace_back("Accept", "application/json");
  if (!content_type.empty()) req.headers.emplace_back("Content-Type", content_type);
  if (!authorization.empty()) req.headers.emplace_back("Authorization", authorization);
  req.body = body;
  req.timeout = options_.timeout;
  // start() and a bounded wait rather than perform(): a stuck exchange must not hang the flow.
  auto result = std::make_shared<Reply>();
  auto error = std::make_shared<std::string>();
  auto done = std::make_shared<std::promise<void>>();
  auto finished = done->get_future();
  net::ExchangeCallbacks cb;
  cb.on_head = [result](const net::HttpHead& h) {
    result->status = h.status;
    result->location = h.header("location");
  };
  cb.on_data = [result](std::string_view d) { result->body.append(d); };
  cb.on_end = [error, done](const net::HttpError& e) {
    *error = e.message;
    done->set_value();
  };
  HttpEngine::ExchangeId id = 0;
  try {
    id = engine_->start(target, std::move(req), std::move(cb));
  } catch (const std::exception& e) {
    throw AuthorizationError(step, 0, "", e.what());
  }
  if (finished.wait_for(options_.timeout + std::chrono::seconds(15)) != std::future_status::ready) {
    engine_->cancel(id);
    throw AuthorizationError(step, 0, "", fmt::format("{} {}: no answer", method, url));
  }
  if (!error->empty())
    throw AuthorizationError(step, result->status, "",
                             fmt::format("{} {}: {}", method, url, *error));
  return *result;
}

std::optional<json::object> OAuthSession::get_json(const std::string& step,
                                                   const std::string& url) {
  Reply r;
  try {
    r = http(step, "GET", url, "", "");
  } catch (const AuthorizationError& e) {
    tried_ += fmt::format(" {} ({});", url, e.description());
    return std::nullopt;
  }
  if (r.status != 200) {
    tried_ += fmt::format(" {} (HTTP {});", url, r.status);
    return std::nullopt;
  }
  std::error_code ec;
  auto v = json::parse(r.body, ec);
  if (ec || !v.is_object()) {
    tried_ += fmt::format(" {} (not a JSON object);", url);
    return std::nullopt;
  }
  return std::move(v.get_object());
}

void OAuthSession::discover(const std::string& resource_metadata_url) {
  tried_.clear();
  std::optional<json::object> prm;
  if (!resource_metadata_url.empty())
    prm = get_json("protected resource metadata", resource_metadata_url);
  for (const auto& url : protected_resource_metadata_urls(server_url_)) {
    if (prm) break;
    prm = get_json("protected resource metadata", url);
  }
  std::string issuer;
  const bool legacy = !prm;  // 2025-03-26: the MCP server's origin is the authorization server
  if (prm) {
    resource_ = string_or_empty(*prm, "resource");
    if (resource_.empty()) resource_ = canonical_resource(server_url_);
    if (!resource_covers(resource_, server_url_))
      throw AuthorizationError(
          "protected resource metadata", 0, "invalid_resource",
          fmt::format("the metadata is for resource {}, not for {}", resource_, server_url_));
    const auto* servers = prm->if_contains("authorization_servers");
    if (servers != nullptr && servers->is_array() && !servers->get_array().empty() &&
        servers->get_array()[0].is_string())
      issuer = servers->get_array()[0].get_string();
    if (issuer.empty())
      throw AuthorizationError("protected resource metadata", 0, "invalid_metadata",
                               "authorization_servers is missing");
    if (!options_.allowed_authorization_servers.empty() && !listed(issuer))
      throw AuthorizationError(
          "protected resource metadata", 0, "invalid_metadata",
          fmt::format("authorization server {} is not in allowed_authorization_servers", issuer));
    if (const auto* s = prm->if_contains("scopes_supported"); s != nullptr && s->is_array())
      resource_scopes_ = s->get_array();
  } else {
    resource_ = canonical_resource(server_url_);
    issuer = origin_of(server_url_);
  }
  std::optional<json::object> as;
  for (const auto& url : authorization_server_metadata_urls(issuer)) {
    as = get_json("authorization server metadata", url);
    if (as) break;
  }
  if (!as) {
    if (!legacy)
      throw AuthorizationError("authorization server metadata", 0, "",
                               fmt::format("no metadata for {}:{}", issuer, tried_));
    as = json::object{{"issuer", issuer},
                      {"authorization_endpoint", issuer + "/authorize"},
                      {"token_endpoint", issuer + "/token"},
                      {"registration_endpoint", issuer + "/register"},
                      {"code_challenge_methods_supported", json::array{"S256"}}};
  }
  check_issuer(issuer, *as, legacy);
  // The specification: no code_challenge_methods_supported means no PKCE, and clients must
  // not proceed without it.
  if (options_.grant == OAuthOptions::Grant::authorization_code &&
      !array_has(as->if_contains("code_challenge_methods_supported"), "S256"))
    throw AuthorizationError("authorization server metadata", 0, "unsupported_pkce",
                             fmt::format("{} does not support PKCE S256", issuer));
  server_metadata_ = std::move(*as);
  discovered_ = true;
}

bool OAuthSession::listed(const std::string& issuer) const {
  const auto& allowed = options_.allowed_authorization_servers;
  return std::find(allowed.begin(), allowed.end(), issuer) != allowed.end();
}

// A resource server could name any authorization server, and that server any endpoint: the
// metadata must be for the issuer it was fetched for (RFC 8414 section 3.3), and unless the
// issuer is configured, its endpoints (where the client secret and codes go) on its origin.
void OAuthSession::check_issuer(const std::string& issuer, const json::object& metadata,
                                bool guessed) const {
  check_issuer_metadata(issuer, metadata, guessed, listed(issuer));
}

std::string OAuthSession::metadata_string(const char* key) const {
  return string_or_empty(server_metadata_, key);
}

void OAuthSession::register_client() {
  if (!client_id_.empty()) return;
  const auto* cimd = server_metadata_.if_contains("client_id_metadata_document_supported");
  if (!options_.client_metadata_url.empty() && cimd != nullptr && cimd->is_bool() &&
      cimd->get_bool()) {
    client_id_ = options_.client_metadata_url;
    registered_auth_method_ = "none";
    return;
  }
  const std::string endpoint = metadata_string("registration_endpoint");
  if (endpoint.empty())
    throw AuthorizationError("client registration", 0, "",
                             "no client_id is configured and the authorization server offers "
                             "no dynamic client registration");
  const bool code = options_.grant == OAuthOptions::Grant::authorization_code;
  const auto* supported = server_metadata_.if_contains("token_endpoint_auth_methods_supported");
  std::string method = options_.token_endpoint_auth_method;
  if (method.empty())
    method = array_has(supported, "none") && code ? "none" : "client_secret_basic";
  json::object request{{"client_name", options_.client_name},
                       {"token_endpoint_auth_method", method}};
  if (code) {
    request["redirect_uris"] = json::array{options_.redirect_uri};
    request["grant_types"] = json::array{"authorization_code", "refresh_token"};
    request["response_types"] = json::array{"code"};
  } else if (options_.grant == OAuthOptions::Grant::client_credentials) {
    request["grant_types"] = json::array{"client_credentials"};
  } else {
    request["grant_types"] = json::array{"urn:ietf:params:oauth:grant-type:jwt-bearer"};
  }
  const auto r =
      http("client registration", "POST", endpoint, "application/json", json::serialize(request));
  if (r.status != 200 && r.status != 201) throw_answer("client registration", r.status, r.body);
  std::error_code ec;
  auto v = json::parse(r.body, ec);
  if (ec || !v.is_object() || string_or_empty(v.get_object(), "client_id").empty())
    throw AuthorizationError("client registration", r.status, "invalid_client_metadata",
                             "the answer has no client_id: " + excerpt(r.body));
  client_id_ = string_or_empty(v.get_object(), "client_id");
  client_secret_ = string_or_empty(v.get_object(), "client_secret");
  registered_auth_method_ = string_or_empty(v.get_object(), "token_endpoint_auth_method");
}

std::string OAuthSession::token_auth_method() const {
  if (!options_.token_endpoint_auth_method.empty()) return options_.token_endpoint_auth_method;
  if (!options_.private_key_pem.empty()) return "private_key_jwt";
  if (!registered_auth_method_.empty()) return registered_auth_method_;
  if (client_secret_.empty()) return "none";
  const auto* supported = server_metadata_.if_contains("token_endpoint_auth_methods_supported");
  if (supported == nullptr) return "client_secret_basic";  // RFC 8414's default
  for (const char* m : {"client_secret_basic", "client_secret_post", "none"})
    if (array_has(supported, m)) return m;
  return "client_secret_basic";
}

std::string OAuthSession::choose_scope(const std::string& challenge_scope) const {
  std::string scope = options_.scope;
  if (scope.empty()) scope = challenge_scope;
  if (scope.empty()) {
    for (const auto& s : resource_scopes_) {
      if (!s.is_string()) continue;
      if (!scope.empty()) scope += ' ';
      scope += s.get_string();
    }
  }
  // SEP-2207: a client that wants refresh tokens asks for offline_access where it is offered.
  if (!scope.empty() && options_.grant == OAuthOptions::Grant::authorization_code &&
      array_has(server_metadata_.if_contains("scopes_supported"), "offline_access") &&
      (" " + scope + " ").find(" offline_access ") == std::string::npos)
    scope += " offline_access";
  return scope;
}

void OAuthSession::token_request(const std::string& step, Fields fields) {
  const std::string endpoint = metadata_string("token_endpoint");
  if (endpoint.empty())
    throw AuthorizationError(step, 0, "",
                             "the authorization server metadata has no token_endpoint");
  const std::string method = token_auth_method();
  std::string authorization;
  if (method == "client_secret_basic") {
    authorization = "Basic " + base64(client_id_ + ":" + client_secret_);
  } else if (method == "client_secret_post") {
    fields.emplace_back("client_id", client_id_);
    fields.emplace_back("client_secret", client_secret_);
  } else if (method == "private_key_jwt") {
    if (options_.private_key_pem.empty())
      throw AuthorizationError(step, 0, "", "private_key_jwt needs private_key_pem");
    std::string audience = metadata_string("issuer");
    if (audience.empty()) audience = endpoint;
    fields.emplace_back("client_id", client_id_);
    fields.emplace_back("client_assertion_type",
                        "urn:ietf:params:oauth:client-assertion-type:jwt-bearer");
    fields.emplace_back("client_assertion",
                        make_client_assertion(options_.private_key_pem, options_.signing_algorithm,
                                              client_id_, audience));
  } else if (method == "none") {
    fields.emplace_back("client_id", client_id_);
  } else {
    throw AuthorizationError(step, 0, "",
                             "unsupported token endpoint authentication method '" + method + "'");
  }
  const auto r = http(step, "POST", endpoint, "application/x-www-form-urlencoded",
                      form_encode(fields), authorization);
  if (r.status != 200) throw_answer(step, r.status, r.body);
  store_token(parse_token_answer(r.body, step));
}

void OAuthSession::store_token(TokenAnswer answer) {
  std::lock_guard lock(token_mutex_);
  access_token_ = std::move(answer.access_token);
  if (!answer.refresh_token.empty()) refresh_token_ = std::move(answer.refresh_token);
  expires_at_.reset();
  if (answer.lifetime) expires_at_ = std::chrono::steady_clock::now() + *answer.lifetime;
}

bool OAuthSession::refresh() {
  std::string token;
  {
    std::lock_guard lock(token_mutex_);
    token = refresh_token_;
  }
  if (token.empty() || !discovered_) return false;
  try {
    token_request(
        "refresh",
        {{"grant_type", "refresh_token"}, {"refresh_token", token}, {"resource", resource_}});
    return true;
  } catch (const AuthorizationError&) {
    std::lock_guard lock(token_mutex_);
    refresh_token_.clear();  // rejected: only a new authorization helps
    return false;
  }
}

void OAuthSession::authorization_code_flow(const std::string& scope) {
  const std::string endpoint = metadata_string("authorization_endpoint");
  if (endpoint.empty())
    throw AuthorizationError("authorization", 0, "",
                             "the authorization server metadata has no authorization_endpoint");
  const std::string verifier = random_token(32);
  const std::string state = random_token(16);
  Fields params{{"response_type", "code"},
                {"client_id", client_id_},
                {"code_challenge", pkce_s256_challenge(verifier)},
                {"code_challenge_method", "S256"},
                {"redirect_uri", options_.redirect_uri},
                {"state", state}};
  if (!scope.empty()) params.emplace_back("scope", scope);
  params.emplace_back("resource", resource_);
  const std::string url = with_query(endpoint, params);
  check_secure("authorization", url);
  std::string callback;
  try {
    callback = options_.authorize ? options_.authorize(url)
                                  : headless_authorization(url, options_.timeout);
  } catch (const AuthorizationError&) {
    throw;
  } catch (const std::exception& e) {
    throw AuthorizationError("authorization", 0, "", e.what());
  }
  std::string code = callback;
  if (callback.find('?') != std::string::npos || callback.find("://") != std::string::npos) {
    if (auto error = query_param(callback, "error"); !error.empty())
      throw AuthorizationError("authorization", 0, error,
                               query_param(callback, "error_description"));
    if (query_param(callback, "state") != state)
      throw AuthorizationError("authorization", 0, "invalid_state",
                               "the redirect's state does not match the request's");
    code = query_param(callback, "code");
  }
  if (code.empty())
    throw AuthorizationError("authorization", 0, "", "the redirect carries no code");
  token_request("token request", {{"grant_type", "authorization_code"},
                                  {"code", code},
                                  {"code_verifier", verifier},
                                  {"redirect_uri", options_.redirect_uri},
                                  {"resource", resource_}});
}

void OAuthSession::client_credentials_flow(const std::string& scope) {
  Fields fields{{"grant_type", "client_credentials"}};
  if (!scope.empty()) fields.emplace_back("scope", scope);
  fields.emplace_back("resource", resource_);
  token_request("token request", std::move(fields));
}

void OAuthSession::cross_app_access_flow(const std::string& scope) {
  if (options_.idp_token_endpoint.empty() || options_.idp_id_token.empty())
    throw AuthorizationError("token exchange", 0, "",
                             "cross_app_access needs idp_token_endpoint and idp_id_token");
  std::string audience = metadata_string("issuer");
  if (audience.empty()) audience = metadata_string("token_endpoint");
  Fields exchange{{"grant_type", "urn:ietf:params:oauth:grant-type:token-exchange"},
                  {"subject_token", options_.idp_id_token},
                  {"subject_token_type", "urn:ietf:params:oauth:token-type:id_token"},
                  {"requested_token_type", "urn:ietf:params:oauth:token-type:id-jag"},
                  {"audience", audience},
                  {"resource", resource_}};
  if (!options_.idp_client_id.empty()) exchange.emplace_back("client_id", options_.idp_client_id);
  if (!scope.empty()) exchange.emplace_back("scope", scope);
  const auto r = http("token exchange", "POST", options_.idp_token_endpoint,
                      "application/x-www-form-urlencoded", form_encode(exchange));
  if (r.status != 200) throw_answer("token exchange", r.status, r.body);
  std::error_code ec;
  auto v = json::parse(r.body, ec);
  const std::string grant =
      !ec && v.is_object() ? string_or_empty(v.get_object(), "access_token") : std::string();
  if (grant.empty())
    throw AuthorizationError("token exchange", r.status, "",
                             "the answer has no access_token (ID-JAG): " + excerpt(r.body));
  Fields fields{{"grant_type", "urn:ietf:params:oauth:grant-type:jwt-bearer"},
                {"assertion", grant}};
  if (!scope.empty()) fields.emplace_back("scope", scope);
  fields.emplace_back("resource", resource_);
  token_request("token request", std::move(fields));
}

void OAuthSession::answer_challenge(int status, const std::string& www_authenticate,
                                    const std::string& sent_authorization) {
  std::lock_guard flow(flow_mutex_);
  {
    std::lock_guard lock(token_mutex_);
    if (stopped_) throw AuthorizationError("authorization", status, "", "the transport is closed");
  }
  const auto challenge = parse_www_authenticate(www_authenticate);
  const std::string current = authorization();
  // Another request's flow already replaced the token this one was sent with: just retry.
  if (status == 401 && !current.empty() && current != sent_authorization) return;
  if (status == 401 && refresh()) return;
  if (!discovered_) discover(challenge.resource_metadata);
  register_client();
  const std::string scope = choose_scope(challenge.scope);
  switch (options_.grant) {
    case OAuthOptions::Grant::client_credentials:
      client_credentials_flow(scope);
      break;
    case OAuthOptions::Grant::cross_app_access:
      cross_app_access_flow(scope);
      break;
    case OAuthOptions::Grant::authorization_code:
      authorization_code_flow(scope);
      break;
  }
}

}  // namespace mcpclass::auth
