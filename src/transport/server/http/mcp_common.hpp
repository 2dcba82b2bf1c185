// Internal: what the Streamable HTTP, legacy SSE and router handlers share: the checks a JSON-RPC
// body passes first, and finding the session a request names.
// Thread-safety: on the exchange's strand.
#pragma once

#include "transport/server/http/exchange.hpp"

#include <boost/json/value.hpp>

#include <memory>
#include <optional>
#include <string_view>

namespace mcpclass::server {
class Session;
class Stream;
}  // namespace mcpclass::server

namespace mcpclass::transport::server {

/// Checks Content-Type and MCP-Protocol-Version, parses the body. Responds (415, 400) and
/// returns nullopt when the request is refused.
std::optional<boost::json::value> read_rpc_body(Exchange& exchange, const Request& request);
/// 404, the spec's answer to an id that names no session.
void session_not_found(Exchange& exchange);
/// The session named by Mcp-Session-Id, acquired (busy: the caller ends it), or nullptr after
/// answering 400 (no id) or 404 (unknown id).
std::shared_ptr<HttpSession> find_session(Exchange& exchange, std::string_view id);
/// Hands `message` to the engine; a throw closes `stream` with an internal error instead.
void hand_over(mcpclass::server::Session& session, boost::json::value message,
               const std::shared_ptr<mcpclass::server::Stream>& stream);

}  // namespace mcpclass::transport::server
