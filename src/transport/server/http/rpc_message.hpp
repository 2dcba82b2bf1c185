// Internal: what the HTTP connection needs to know about a JSON-RPC body (does it need an answer,
// is it an error, what to count it as) and the error body it sends when it refuses a request.
// Thread-safety: pure functions; reentrant.
#pragma once

#include "mcpclass/util/admission_gate.hpp"

#include <boost/json/value.hpp>

#include <optional>
#include <string>
#include <string_view>

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

/// Puts the X-Request-Timeout-Ms value `header` (non-empty) into the `_meta` of every request in
/// `body` that names no timeout of its own. Returns why the value is unusable (not a whole
/// number of milliseconds up to a day), or nullopt.
std::optional<std::string> apply_request_timeout(boost::json::value& body, std::string_view header);

/// Puts the HTTP request's W3C `traceparent` (non-empty) and `tracestate` headers into the
/// `_meta` of every request in `body` whose `_meta` has no `traceparent` of its own (the MCP
/// 2026-07-28 keys, SEP-414: `_meta` wins), so the engine reads one place on every transport.
/// Not checked here: a malformed value starts a new trace in the engine, never an error.
void apply_trace_headers(boost::json::value& body, std::string_view traceparent,
                         std::string_view tracestate);

/// The Retry-After seconds (at least 1) when `message` is a refusal of admission control
/// (mcpclass::server::kOverloaded, answered with 503), or nullopt.
std::optional<std::string> overload_retry_after(const std::optional<boost::json::value>& message);

/// The method to count a body under in /metrics: its method, "response", "batch" or "invalid".
std::string method_of(const boost::json::value& body);

}  // namespace mcpclass::transport::server
