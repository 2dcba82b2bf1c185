// Admission control of tool calls (Tool::admit): the place a call takes before it is queued,
// and the error a refusal carries. The engine only calls these; what bounds the calls is the
// host's (the service's util::AdmissionGate).
// Thread-safety: a ToolAdmission belongs to one call; a ToolAdmit may be called from any thread.
#pragma once

#include <boost/json/object.hpp>

#include <functional>
#include <memory>
#include <string_view>

namespace mcpclass::server {

/// The JSON-RPC error code of a refusal by admission control, at once or because the call's
/// deadline passed before it ran; data {reason: "rejected"|"expired", retryAfterMs,
/// maxConcurrent, maxQueue}. The HTTP transports answer it with 503 and Retry-After.
inline constexpr int kOverloaded = -32010;

/// The `_meta` key of a request's deadline: the milliseconds it may take from its arrival. The
/// HTTP transports take it from the X-Request-Timeout-Ms header too.
inline constexpr std::string_view kMetaRequestTimeout = "io.mcpclass/timeoutMs";

/// A call's place under its tool's admission control (Tool::admit), held until the call ends.
class ToolAdmission {
 public:
  virtual ~ToolAdmission() = default;
  /// Runs on the handler's thread just before the handler. Throws jsonrpc::ProtocolError to
  /// drop the call unrun (its deadline passed while it waited for its turn).
  virtual void start() = 0;
  /// Runs after the handler, on its thread, with whether its result was an error.
  virtual void finish(bool is_error) { (void)is_error; }
};

/// Called on the transport's thread before a call is queued for the executor, with the
/// tools/call params (name, arguments, `_meta`); returns the call's place (nullptr: it needs
/// none) or throws jsonrpc::ProtocolError to refuse the call at once.
using ToolAdmit = std::function<std::unique_ptr<ToolAdmission>(const boost::json::object& params)>;

}  // namespace mcpclass::server
