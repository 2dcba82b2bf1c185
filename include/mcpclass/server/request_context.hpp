// What a handler can do while it serves one request: report progress, log, notice cancellation,
// and ask the client something (sampling, elicitation, roots).
// Thread-safety: one context belongs to one request; its methods may be called from the handler's
// thread while the engine cancels it from another.
#pragma once

#include "mcpclass/jsonrpc/message.hpp"
#include "mcpclass/server/log_level.hpp"
#include "mcpclass/util/trace_context.hpp"

#include <boost/json.hpp>

#include <chrono>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>

namespace mcpclass::server {

namespace json = boost::json;

/// The client as the session knows it: what it said at initialize (or in the request's `_meta`).
struct ClientInfo {
  std::string protocol_version;
  json::object capabilities;
  json::object implementation;  ///< clientInfo {name, version, ...}
};

class RequestContext {
 public:
  virtual ~RequestContext() = default;

  virtual const jsonrpc::Id& id() const = 0;
  virtual const std::string& method() const = 0;
  virtual const ClientInfo& client() const = 0;
  /// The caller's W3C trace context: `traceparent` and `tracestate` in the request's
  /// `params._meta` (MCP 2026-07-28, SEP-414; the HTTP transports put the request's headers
  /// there when `_meta` has no `traceparent`). nullopt when absent or malformed (the work starts
  /// a trace of its own). The engine only parses it: spans are the handler's business.
  virtual const std::optional<util::TraceParent>& trace_parent() const = 0;

  /// Requested when the client cancels the request or the session closes.
  virtual std::stop_token stop_token() const = 0;
  bool cancelled() const { return stop_token().stop_requested(); }
  /// Sleeps; returns false early when the request is cancelled.
  bool sleep_for(std::chrono::milliseconds duration) const;

  /// Sends notifications/progress when the client asked for progress (`_meta.progressToken`).
  virtual void progress(double progress, std::optional<double> total = std::nullopt,
                        std::string_view message = {}) = 0;
  /// Sends notifications/message when `level` passes the session's logging level.
  virtual void log(LogLevel level, json::value data, std::string_view logger = {}) = 0;
  /// Sends a notification on this request's stream.
  virtual void notify(std::string_view method, json::value params) = 0;

  /// Sends a server→client request on this request's stream and waits for the answer. Throws
  /// jsonrpc::ProtocolError on an error answer, on timeout (kRequestTimeout), on cancellation
  /// (kRequestCancelled) and when the client lacks the capability the method needs.
  virtual json::value request(std::string_view method, json::value params,
                              std::optional<std::chrono::milliseconds> timeout = std::nullopt) = 0;

  /// Closes the connection carrying this request's stream now if the client can resume it
  /// (Streamable HTTP with resumable SSE, SEP-1699); the handler goes on and the client gets
  /// later messages and the result by reconnecting with Last-Event-ID. Returns whether it did.
  virtual bool close_sse_stream() { return false; }
};

}  // namespace mcpclass::server
