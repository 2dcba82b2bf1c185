#include "transport/server/http/mcp_common.hpp"

#include "mcpclass/jsonrpc/message.hpp"
#include "mcpclass/protocol/version.hpp"
#include "mcpclass/server/session.hpp"
#include "transport/server/http/guard.hpp"
#include "transport/server/http/rpc_message.hpp"

#include <boost/json.hpp>

#include <fmt/format.h>

namespace mcpclass::transport::server {

namespace http = boost::beast::http;
namespace json = boost::json;

std::optional<json::value> read_rpc_body(Exchange& exchange, const Request& req) {
  if (!media_type_is(req[http::field::content_type], "application/json")) {
    exchange.respond(
        http::status::unsupported_media_type,
        rpc_error_body(jsonrpc::kInvalidRequest,
                       "Unsupported Media Type: Content-Type must be application/json"));
    return std::nullopt;
  }
  const std::string_view version = req[kVersionHeader];
  if (!version.empty() && !protocol::is_supported_version(version)) {
    exchange.respond(http::status::bad_request,
                     rpc_error_body(jsonrpc::kInvalidRequest,
                                    fmt::format("Bad Request: unsupported MCP-Protocol-Version {}",
                                                std::string(version))));
    return std::nullopt;
  }
  auto parsed = jsonrpc::parse_json(req.body(), exchange.shared->server->options().limits);
  if (auto* error = std::get_if<jsonrpc::Error>(&parsed)) {
    exchange.respond(http::status::bad_request,
                     json::serialize(jsonrpc::make_error(std::nullopt, std::move(*error))));
    return std::nullopt;
  }
  return std::move(std::get<json::value>(parsed));
}

void session_not_found(Exchange& exchange) {
  exchange.respond(http::status::not_found,
                   rpc_error_body(jsonrpc::kInvalidRequest, "Session not found"));
}

std::shared_ptr<HttpSession> find_session(Exchange& exchange, std::string_view id) {
  if (id.empty()) {
    exchange.respond(
        http::status::bad_request,
        rpc_error_body(jsonrpc::kInvalidRequest, "Bad Request: Mcp-Session-Id header is required"));
    return nullptr;
  }
  auto entry = exchange.shared->sessions->acquire(std::string(id));
  if (entry && entry->legacy) entry->end();
  if (!entry || entry->legacy) {
    session_not_found(exchange);
    return nullptr;
  }
  return entry;
}

void hand_over(mcpclass::server::Session& session, json::value message,
               const std::shared_ptr<mcpclass::server::Stream>& stream) {
  try {
    session.handle(std::move(message), stream);
  } catch (const std::exception& e) {
    stream->close(jsonrpc::make_error(std::nullopt, {jsonrpc::kInternalError, e.what()}));
  }
}

}  // namespace mcpclass::transport::server
