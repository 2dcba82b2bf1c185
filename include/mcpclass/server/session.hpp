// One client's conversation with a Server: lifecycle state, negotiated version, logging level,
// subscriptions, requests in flight and requests it is waiting on the client for.
// Thread-safety: handle() may be called from several threads at once (HTTP POSTs in parallel);
// answers go to the Stream given with each message.
#pragma once

#include "mcpclass/server/log_level.hpp"
#include "mcpclass/server/request_context.hpp"
#include "mcpclass/server/server.hpp"
#include "mcpclass/server/stream.hpp"

#include <boost/json.hpp>

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <variant>

namespace mcpclass::server {

class InFlight;
struct PendingClientRequest;

class Session : public std::enable_shared_from_this<Session> {
 public:
  enum class State { awaiting_initialize, initializing, ready, closed };

  ~Session();

  /// Parses and serves one incoming message (or batch). Always ends with out->close().
  void handle(std::string_view text, const StreamPtr& out);
  void handle(const json::value& message, const StreamPtr& out);
  /// The same for a message the caller hands over: a request's params are moved, not copied.
  void handle(json::value&& message, const StreamPtr& out);

  /// Where messages that belong to no request go (list_changed, resources/updated): the
  /// standalone SSE stream or stdout. Without one they are dropped.
  void set_notification_stream(StreamPtr out);

  /// Cancels requests in flight and fails requests awaiting the client. Idempotent.
  void close();

  State state() const;
  std::string protocol_version() const;
  std::size_t in_flight() const;

  /// Whether the engine answers requests named `method` (so a transport may use it as a
  /// metrics label: any other name is the client's text).
  static bool answers(std::string_view method) noexcept { return find_method(method) != nullptr; }

 private:
  friend class Server;
  friend class InFlight;
  Session(std::shared_ptr<Server> server, SessionOptions options);

  void handle_one(std::variant<jsonrpc::Message, jsonrpc::Invalid> parsed, const StreamPtr& out);
  void handle_batch(const json::array& batch, const StreamPtr& out);
  void handle_request(jsonrpc::Request request, const StreamPtr& out);
  void handle_notification(const jsonrpc::Notification& n);
  void handle_response(const jsonrpc::Response& r);
  void finish(const std::shared_ptr<InFlight>& call, json::value result);
  void finish_error(const std::shared_ptr<InFlight>& call, jsonrpc::Error error);
  void release(const std::shared_ptr<InFlight>& call);

  /// A request method as the engine answers it (the table in session.cpp).
  struct Method;
  /// The method named `name`, or nullptr when the engine has none.
  static const Method* find_method(std::string_view name) noexcept;

  // Method handlers: return the result or throw jsonrpc::ProtocolError. Those that run
  // asynchronously (tools/call, resources/read, prompts/get) finish their InFlight themselves.
  json::value on_initialize(const InFlight& call);
  json::value on_discover();
  json::value on_tools_list(const json::value& params);
  void on_tools_call(const std::shared_ptr<InFlight>& call);
  json::value on_resources_list(const json::value& params);
  json::value on_resource_templates_list(const json::value& params);
  void on_resources_read(const std::shared_ptr<InFlight>& call);
  json::value on_subscribe(const json::value& params, bool subscribe);
  json::value on_prompts_list(const json::value& params);
  void on_prompts_get(const std::shared_ptr<InFlight>& call);
  json::value on_complete(const json::value& params);
  json::value on_set_level(const json::value& params);

  /// Runs `work` for the call (on the executor unless `run_inline`) and finishes the call with
  /// its result or error, unless the call was cancelled meanwhile.
  void run_async(const std::shared_ptr<InFlight>& call, bool run_inline,
                 std::function<json::value(InFlight&)> work);
  void send_standalone(json::value message);
  bool log_enabled(LogLevel level) const;
  bool subscribed(const std::string& uri) const;
  json::value request_client(InFlight& call, std::string_view method, json::value params,
                             std::optional<std::chrono::milliseconds> timeout);

  std::shared_ptr<Server> server_;
  SessionOptions options_;
  mutable std::mutex mutex_;
  State state_ = State::awaiting_initialize;
  // Shared with each call in flight: a copy per request was three allocations.
  std::shared_ptr<const ClientInfo> client_ = std::make_shared<const ClientInfo>();
  std::optional<LogLevel> log_level_;
  std::set<std::string> subscriptions_;
  StreamPtr notifications_;
  std::map<jsonrpc::Id, std::shared_ptr<InFlight>> in_flight_;  // by id: no key string per call
  std::map<std::string, std::shared_ptr<PendingClientRequest>> awaiting_client_;
  std::int64_t next_request_id_ = 1;
};

}  // namespace mcpclass::server
