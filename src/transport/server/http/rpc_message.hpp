// Internal: what the HTTP connection needs to know about a JSON-RPC body (does it need an answer,
// is it an error, what to count it as) and the error body it sends when it refuses a request.
// Thread-safety: pure functions; reentrant.
#pragma once

#include <boost/json/value.hpp>

#include <optional>
#include <string>

namespace mcpclass::transport::server {

/// A JSON-RPC error response without id, serialized.
std::string rpc_error_body(int code, std::string message);

/// Why a request got no answer: the engine closed its stream without one (a cancellation, the
/// session closing, or the server shutting down). Sent with 503 rather than 202, which would
/// tell the client its request was a notification.
inline constexpr const char* kCancelledBeforeAnswer =
    "the request was cancelled before it was answered (notifications/cancelled, its session "
    "closing, or the server shutting down)";

/// Whether a final message (or a batch of them) carries an error.
bool is_error_message(const std::optional<boost::json::value>& message);

/// Whether a parsed body carries at least one request (something that gets an answer).
bool has_request(const boost::json::value& body);

/// The method to count a body under in /metrics: its method, "response", "batch" or "invalid".
std::string method_of(const boost::json::value& body);

}  // namespace mcpclass::transport::server
