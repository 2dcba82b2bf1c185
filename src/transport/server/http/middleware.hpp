// Internal: the middleware of the HTTP front, in the order make_front() chains them: refusing
// requests while the server shuts down, resolving the route (404 for none; the /metrics label),
// the Host/Origin guard against DNS rebinding, and the access token (static bearer tokens or a
// JWT, whose granted scopes it records on the exchange). Plus the token checks handlers need
// later: the scopes a parsed JSON-RPC message needs, and a token check without an answer.
// Thread-safety: the middleware hold no state; the functions are reentrant.
#pragma once

#include "transport/server/http/front.hpp"

#include <boost/json/fwd.hpp>

#include <memory>

namespace mcpclass::transport::server {

/// 503 while the server stops.
std::shared_ptr<HttpMiddleware> refuse_while_stopping();
/// 404 when no route takes the path; otherwise the route's /metrics label.
std::shared_ptr<HttpMiddleware> require_route();
/// 403 for a Host or Origin that is not local or configured.
std::shared_ptr<HttpMiddleware> guard_host_and_origin();
/// On Access::token routes when auth is configured: 401 without a valid token, 403 for a JWT
/// lacking the default scopes, 503 when the signing keys cannot be had.
std::shared_ptr<HttpMiddleware> require_token();

/// The token check without an answer (GET /health shows details to authorized callers only).
bool authorized_quietly(const HttpShared& shared, const Request& request);
/// Before dispatch: true when the exchange's JWT (if any) grants every scope `message` needs
/// (each tools/call of a batch included); otherwise responds 403 insufficient_scope.
bool scopes_allow(Exchange& exchange, const boost::json::value& message);

}  // namespace mcpclass::transport::server
