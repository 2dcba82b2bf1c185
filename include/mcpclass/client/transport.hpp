// How the client engine reaches a server: a transport carries whole JSON-RPC messages both ways
// and reports failures; the engine does correlation, timeouts and the protocol.
#pragma once

#include "mcpclass/jsonrpc/message.hpp"

#include <boost/json.hpp>

#include <exception>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace mcpclass::client {

namespace json = boost::json;

/// What a transport reports to its engine. Called from the transport's own threads; handlers
/// must not block for long and must not call close() on the transport.
struct TransportHandlers {
  /// One JSON-RPC message (request, notification or response) from the server.
  std::function<void(json::value message)> on_message;
  /// A request sent earlier could not be delivered or its answer cannot come (HTTP error status,
  /// connection reset). `id` names it; nullopt for failures not tied to a request.
  std::function<void(std::optional<jsonrpc::Id> id, std::string reason)> on_failure;
  /// Optional: a request failed with a typed error (auth::AuthorizationError) that the caller
  /// should see as such. Transports that have one call this when it is set, else on_failure
  /// with the error's message.
  std::function<void(const jsonrpc::Id& id, std::exception_ptr error)> on_request_error;
  /// The connection is gone for good (process exited, session deleted); pending requests fail.
  std::function<void(std::string reason)> on_closed;
  /// Diagnostic lines: a child's stderr, reconnect notices.
  std::function<void(std::string_view line)> on_log;
};

/// A client-side transport.
/// Thread-safety: send(), abandon() and set_protocol_version() may be called from any thread
/// once start() returned; start() and close() belong to the owner.
class ClientTransport {
 public:
  virtual ~ClientTransport() = default;

  /// Connects or spawns. Throws TransportError when the peer cannot be reached.
  virtual void start(TransportHandlers handlers) = 0;
  /// Sends one message. Throws TransportError when the transport is closed; later failures of a
  /// request are reported through on_failure.
  virtual void send(const json::value& message) = 0;
  /// Stops the transport and releases processes, sockets and threads. Idempotent; no handler
  /// runs after it returns.
  virtual void close() = 0;
  virtual bool is_open() const = 0;

  /// The engine gave up waiting for `id` (timeout): drop whatever carries its answer.
  virtual void abandon(const jsonrpc::Id& id) { (void)id; }
  /// The negotiated protocol version (HTTP sends it as MCP-Protocol-Version).
  virtual void set_protocol_version(std::string_view version) { (void)version; }
  /// "stdio:cmd", "http://host/mcp": for messages.
  virtual std::string describe() const = 0;
};

}  // namespace mcpclass::client
