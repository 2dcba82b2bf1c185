// Internal: one MCP client session with a remote tool server, shared by the remote classifiers
// (categories, token spans): (re)connection, retries with backoff and jitter, the circuit breaker
// and the call counters.
// Thread-safety: call() and the accessors may be called concurrently; a reconnect is done by one
// caller while the others wait for it.
#pragma once

#include "mcpclass/client/client.hpp"
#include "mcpclass/remote/remote_classifier.hpp"
#include "remote/call_guard.hpp"

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

namespace mcpclass::remote::detail {

class ToolSession {
 public:
  /// `on_connect` runs after each (re)connect under the connect lock (tool discovery, categories);
  /// it throws RemoteError. `on_notification` sees the server's notifications.
  ToolSession(const RemoteClassifierOptions& options,
              std::shared_ptr<client::ClientTransport> transport, std::string client_name,
              std::function<void()> on_connect,
              std::function<void(std::string_view method)> on_notification = {});
  ~ToolSession();
  ToolSession(const ToolSession&) = delete;
  ToolSession& operator=(const ToolSession&) = delete;

  /// Connects, retrying transport failures as call() does. Throws RemoteError.
  void connect_with_retries();
  /// Runs `attempt` on a connected session behind the breaker, retrying transport failures and
  /// timeouts (max_retries, backoff). Throws the last RemoteError.
  void call(const std::function<void()>& attempt);
  /// One tools/call on the current connection, errors mapped; `meta` goes into its `_meta`
  /// (the trace context). Throws RemoteError.
  json::object call_tool(const std::string& tool, json::object arguments, json::object meta = {});
  /// tools/list on the current connection, errors mapped. Throws RemoteError.
  json::array list_tools();
  bool connected() const { return client_->connected(); }
  /// The transport's description (URL or command), for messages.
  std::string where() const;
  /// {endpoint, calls, failures, retries, circuit[, last_error]}.
  json::object stats() const;
  /// A problem outside call() (a failed refresh) shown as last_error.
  void note_error(std::string message) { guard_.note_error(std::move(message)); }

 private:
  void connect(std::uint64_t seen);

  const RemoteClassifierOptions options_;
  std::shared_ptr<client::ClientTransport> transport_;
  std::unique_ptr<client::Client> client_;
  std::function<void()> on_connect_;

  CallGuard guard_;  // after transport_: its messages name the peer

  std::mutex connect_mutex_;  // one (re)connect at a time
  std::atomic<std::uint64_t> generation_{0};
};

}  // namespace mcpclass::remote::detail
