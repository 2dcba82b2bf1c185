// The REST dialects routers speak (reference.md §2): `POST /mcp/<method>` whose body is the bare
// params, `{"method":..,"params":{..}}`, `{name, arguments}` for tools/call, or empty; the answer
// is the bare result. This adapter turns such a request into a JSON-RPC message and the engine's
// response back into an HTTP status and body.
// Thread-safety: pure functions; reentrant.
#pragma once

#include "mcpclass/jsonrpc/message.hpp"

#include <boost/json/value.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace mcpclass::transport::server {

/// The id the adapter puts on the requests it builds.
inline constexpr std::int64_t kRouterRequestId = 1;

struct RouterReply {
  RouterReply(unsigned s = 200, std::string b = {}, std::string retry = {})
      : status(s), body(std::move(b)), retry_after(std::move(retry)) {}
  unsigned status = 200;
  std::string body;  ///< JSON text; empty for 202.
  /// Retry-After seconds, for a refusal of admission control (503); empty otherwise.
  std::string retry_after;
};

/// Builds the JSON-RPC message for `method` from a dialect body. Notifications (methods under
/// "notifications/") get no id. On a body that is not JSON (or not an object) returns the reply
/// to send instead. The body is parsed within `limits` (the server's, as for /mcp).
std::variant<boost::json::value, RouterReply> router_request(std::string_view method,
                                                             std::string_view body,
                                                             const jsonrpc::ParseLimits& limits);

/// The HTTP answer for the engine's final message: 200 with the bare result; for a JSON-RPC error
/// a 4xx/5xx with `{"error":{code,message[,data]}}`; 202 when a notification has nothing to say.
/// A request (`request`) that ends without an answer was cancelled, by a shutdown or the close of
/// its session: 503 with an error saying so. A refusal of admission control
/// (mcpclass::server::kOverloaded) is 503 with Retry-After.
RouterReply router_reply(const std::optional<boost::json::value>& final_message,
                         bool request = true);

}  // namespace mcpclass::transport::server
