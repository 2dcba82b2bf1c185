// Access tokens: the static bearer tokens and JWT access tokens with their scopes (MCP
// Authorization, RFC 6750 §3 challenges), checked when the header arrives, and the scopes a
// parsed message needs, checked by the handlers before the engine sees it.
#include "mcpclass/jsonrpc/message.hpp"
#include "transport/server/http/guard.hpp"
#include "transport/server/http/middleware.hpp"
#include "transport/server/http/rpc_message.hpp"
#include "transport/server/jwt/validator.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <cctype>

namespace mcpclass::transport::server {

namespace http = boost::beast::http;
namespace json = boost::json;

namespace {

// The token of `Authorization: Bearer <token>`, or empty.
std::string_view bearer_token(std::string_view authorization) {
  while (!authorization.empty() && authorization.front() == ' ') authorization.remove_prefix(1);
  if (authorization.size() < 7) return {};
  for (std::size_t i = 0; i < 6; ++i)
    if (std::tolower(static_cast<unsigned char>(authorization[i])) != "bearer"[i]) return {};
  if (authorization[6] != ' ') return {};
  authorization.remove_prefix(7);
  while (!authorization.empty() && authorization.front() == ' ') authorization.remove_prefix(1);
  while (!authorization.empty() && authorization.back() == ' ') authorization.remove_suffix(1);
  return authorization;
}

// The tool a tools/call names, or nullptr for any other message.
const json::string* called_tool(const json::value& message) {
  const json::object* o = message.if_object();
  const json::value* method = o ? o->if_contains("method") : nullptr;
  if (!method || !method->is_string() || method->get_string() != "tools/call") return nullptr;
  const json::value* params = o->if_contains("params");
  const json::value* name =
      params && params->is_object() ? params->get_object().if_contains("name") : nullptr;
  static const json::string kUnnamed;
  return name && name->is_string() ? &name->get_string() : &kUnnamed;
}

// True when the request may go on (no auth configured, a static token, or a valid JWT with the
// default scopes, whose scopes the exchange then records). Otherwise responds 401 (403 for
// missing default scopes, 503 when the signing keys cannot be had) and returns false.
bool authorize(Exchange& exchange, const Request& req) {
  exchange.granted_scopes.reset();
  const HttpShared& shared = *exchange.shared;
  const auto& options = shared.options;
  if (!shared.auth_on()) return true;
  const std::string_view authorization = req[http::field::authorization];
  if (!options.bearer_tokens.empty() && bearer_matches_any(authorization, options.bearer_tokens))
    return true;
  const bool given = !authorization.empty();
  if (!shared.jwt) {
    exchange.respond(
        http::status::unauthorized,
        rpc_error_body(jsonrpc::kInvalidRequest, "Unauthorized: a valid bearer token is required"),
        "application/json",
        {{"WWW-Authenticate", given ? R"(Bearer realm="mcpclass", error="invalid_token")"
                                    : R"(Bearer realm="mcpclass")"}});
    return false;
  }
  const std::string_view token = bearer_token(authorization);
  std::string problem;
  if (!given) {
    // No description: a client without a token is asked for one, not told it erred.
  } else if (token.empty()) {
    problem = "the Authorization header is not a Bearer token";
  } else {
    try {
      exchange.granted_scopes = shared.jwt->validate(token);
      return scopes_allow(exchange, json::value());  // the default scopes, for every endpoint
    } catch (const jwt::TokenError& e) {
      if (e.kind() != jwt::TokenError::Kind::invalid) {
        // keys_pending: a fetch is under way (at most jwks_timeout), so soon is worth a retry.
        const bool pending = e.kind() == jwt::TokenError::Kind::keys_pending;
        exchange.respond(http::status::service_unavailable,
                         rpc_error_body(jsonrpc::kInternalError,
                                        std::string("Service Unavailable: ") + e.what()),
                         "application/json", {{"Retry-After", pending ? "1" : "30"}});
        return false;
      }
      problem = e.what();
    }
  }
  exchange.respond(http::status::unauthorized,
                   rpc_error_body(jsonrpc::kInvalidRequest,
                                  problem.empty() ? "Unauthorized: a bearer token is required"
                                                  : "Unauthorized: " + problem),
                   "application/json",
                   {{"WWW-Authenticate", shared.jwt->unauthorized_challenge(problem)}});
  return false;
}

class RequireToken final : public HttpMiddleware {
 public:
  bool admit(Exchange& exchange, const Request& header) override {
    if (exchange.target && exchange.target->access == Access::open) return true;
    return authorize(exchange, header);
  }
};

}  // namespace

std::shared_ptr<HttpMiddleware> require_token() {
  return std::make_shared<RequireToken>();
}

bool authorized_quietly(const HttpShared& shared, const Request& req) {
  const std::string_view authorization = req[http::field::authorization];
  if (bearer_matches_any(authorization, shared.options.bearer_tokens)) return true;
  const std::string_view token = bearer_token(authorization);
  if (!shared.jwt || token.empty()) return false;
  try {
    shared.jwt->validate(token);
    return true;
  } catch (const jwt::TokenError&) {
    return false;
  }
}

bool scopes_allow(Exchange& exchange, const json::value& message) {
  const auto& jwt_validator = exchange.shared->jwt;
  if (!exchange.granted_scopes || !jwt_validator) return true;
  const auto& validator = *jwt_validator;
  std::vector<std::string> needed = validator.scopes_for("");
  auto add = [&](const json::value& m) {
    const json::string* tool = called_tool(m);
    if (!tool) return;
    for (auto& s : validator.scopes_for(*tool))
      if (std::find(needed.begin(), needed.end(), s) == needed.end()) needed.push_back(s);
  };
  if (const json::array* batch = message.if_array()) {
    for (const auto& m : *batch) add(m);
  } else {
    add(message);
  }
  const auto lacking = jwt::Validator::missing(needed, *exchange.granted_scopes);
  if (lacking.empty()) return true;
  std::string list;
  for (const auto& s : lacking) list += (list.empty() ? "" : " ") + s;
  exchange.respond(
      http::status::forbidden,
      rpc_error_body(jsonrpc::kInvalidRequest,
                     "Forbidden: insufficient_scope: the token lacks the scope " + list),
      "application/json", {{"WWW-Authenticate", validator.insufficient_scope_challenge(needed)}});
  return false;
}

}  // namespace mcpclass::transport::server
