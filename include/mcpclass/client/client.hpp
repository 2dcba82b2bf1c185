// The MCP client engine: handshake (or the stateless 2026-07-28 style), request/response
// correlation, per-request timeouts with notifications/cancelled, progress callbacks, and
// server→client requests (sampling, elicitation, roots) answered through host callbacks. It does
// no I/O itself: a ClientTransport carries the messages.
//
// Thread-safety: every member but the constructor, connect(), reconnect(), close() and the
// destructor may be called from any thread, concurrently; those four belong to the owner. Host
// callbacks run on the client's worker threads (requests) or the transport's thread
// (notifications, progress) and must be thread-safe.
#pragma once

#include "mcpclass/client/errors.hpp"
#include "mcpclass/client/transport.hpp"
#include "mcpclass/version.hpp"

#include <boost/json.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace mcpclass::client {

namespace json = boost::json;

/// Which protocol generation to speak.
enum class Era {
  handshake,  ///< initialize / notifications/initialized (2024-11-05 … 2025-11-25).
  stateless,  ///< 2026-07-28: server/discover, `_meta` on every request.
  automatic,  ///< Try server/discover; fall back to initialize on any error.
};

struct ElicitationRequest {
  std::string message;
  json::object requested_schema;
  json::object params;  ///< The whole request, for modes beyond forms.
};

struct ElicitationResponse {
  std::string action = "accept";  ///< accept | decline | cancel
  json::object content;           ///< Omitted fields are filled from schema defaults on accept.
};

/// What the host provides. A capability is declared only when its callback is set. Throw
/// jsonrpc::ProtocolError from a callback to answer with that error.
struct ClientCallbacks {
  /// sampling/createMessage params → result ({role, content, model, stopReason}).
  std::function<json::object(const json::object& params)> sampling;
  std::function<ElicitationResponse(const ElicitationRequest& request)> elicitation;
  /// roots/list → the `roots` array.
  std::function<json::array()> roots;
  /// notifications/message params (server logs).
  std::function<void(const json::object& params)> on_log_message;
  /// Every other notification from the server (list_changed, resources/updated, ...).
  std::function<void(std::string_view method, const json::value& params)> on_notification;
  /// Transport diagnostics (child stderr, reconnects) and the reason the connection closed.
  std::function<void(std::string_view line)> on_log;
};

struct ClientOptions {
  std::string name = "mcpclass";
  std::string version = kVersion;
  /// Offered at initialize; a reply with any handshake revision we speak is accepted.
  std::string protocol_version = "2025-11-25";
  Era era = Era::handshake;
  /// Default per-request timeout; always finite.
  std::chrono::milliseconds request_timeout{30'000};
  /// Fill omitted elicitation fields from the schema's defaults before answering.
  bool apply_elicitation_defaults = true;
  ClientCallbacks callbacks;
};

/// Sets `era` and `protocol_version` from a protocol name: "2026-07-28" (stateless), a handshake
/// revision (offered at initialize), or "auto" (server/discover first, then initialize). Throws
/// std::invalid_argument, naming the accepted values, for anything else.
void choose_protocol(ClientOptions& options, std::string_view protocol);

/// What the server said about itself at initialize or server/discover.
struct ServerDescription {
  std::string protocol_version;
  json::object capabilities;
  json::object server_info;  ///< {name, version, ...}; empty when not given.
  std::string instructions;
};

struct RequestOptions {
  /// Overrides ClientOptions::request_timeout.
  std::optional<std::chrono::milliseconds> timeout;
  /// Called with each notifications/progress params for this request (a progress token is
  /// attached when set). Runs on the transport's thread.
  std::function<void(const json::object& progress)> on_progress;
  /// Keys added to the request's `_meta`, e.g. the W3C `traceparent` and `tracestate` of MCP's
  /// 2026-07-28 revision (SEP-414), which the HTTP transports also send as headers.
  json::object meta;
};

class Client {
 public:
  Client(std::shared_ptr<ClientTransport> transport, ClientOptions options = {});
  /// Calls close().
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  /// Starts the transport and performs the handshake (or discovery). Throws TransportError,
  /// TimeoutError, RpcError or ProtocolViolation (unsupported version); the transport is closed
  /// again on failure.
  const ServerDescription& connect();
  /// close() then connect(): restarts a stdio server, opens a new HTTP session.
  const ServerDescription& reconnect();
  /// Fails pending requests, closes the transport, joins the worker threads. Idempotent.
  void close();
  bool connected() const;
  /// Valid after connect().
  ServerDescription server() const;

  /// Sends a request and waits for its result. Throws TransportError, TimeoutError (after sending
  /// notifications/cancelled), RpcError or ProtocolViolation.
  json::value request(std::string_view method, json::object params = {},
                      const RequestOptions& options = {});
  /// Sends a notification. Throws TransportError.
  void notify(std::string_view method, json::object params = {});

  /// tools/list, following nextCursor through every page.
  json::array list_tools(const RequestOptions& options = {});
  /// tools/call; returns the result object (check `isError`). `arguments` is omitted when null.
  json::object call_tool(std::string_view name, std::optional<json::object> arguments,
                         const RequestOptions& options = {});
  json::array list_resources(const RequestOptions& options = {});
  json::object read_resource(std::string_view uri, const RequestOptions& options = {});
  json::array list_prompts(const RequestOptions& options = {});
  json::object get_prompt(std::string_view name, json::object arguments = {},
                          const RequestOptions& options = {});
  void ping(const RequestOptions& options = {});
  void set_logging_level(std::string_view level);
  /// notifications/roots/list_changed.
  void notify_roots_changed();

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

/// Fills properties of `content` that are absent with `default` values of `schema.properties`
/// (SEP-1034). Present values are kept.
json::object apply_schema_defaults(json::object content, const json::object& schema);

}  // namespace mcpclass::client
