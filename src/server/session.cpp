// Session lifecycle, message routing and the requests that need no registry.
#include "mcpclass/server/session.hpp"

#include "mcpclass/protocol/version.hpp"
#include "server/in_flight.hpp"
#include "server/registry.hpp"

#include <fmt/format.h>

namespace mcpclass::server {

using jsonrpc::kInvalidParams;
using jsonrpc::kInvalidRequest;
using jsonrpc::ProtocolError;

namespace {

// A method name as error messages quote it: the client's text, so at most 128 bytes of it (an
// error must not echo megabytes back, or keep them in an SSE replay buffer).
std::string quoted_method(std::string_view name) {
  constexpr std::size_t kShown = 128;
  if (name.size() <= kShown) return std::string(name);
  return fmt::format("{}... ({} bytes)", name.substr(0, kShown), name.size());
}

// Collects the answers of a batch's messages into one array.
class BatchStream final : public Stream {
 public:
  BatchStream(StreamPtr out, std::size_t count) : out_(std::move(out)), left_(count) {}
  void send(json::value message) override { out_->send(std::move(message)); }
  void close(std::optional<json::value> final_message) override {
    std::optional<json::value> all;
    {
      std::lock_guard lock(mutex_);
      if (final_message) answers_.push_back(std::move(*final_message));
      if (--left_ != 0) return;
      if (!answers_.empty()) all = std::move(answers_);
    }
    out_->close(std::move(all));
  }

 private:
  StreamPtr out_;
  std::mutex mutex_;
  std::size_t left_;
  json::array answers_;
};

// Methods the stateless revision removed.
}  // namespace

struct Session::Method {
  std::string_view name;
  /// Answers the call: finishes it with a result, or starts work that will.
  void (*answer)(Session&, const std::shared_ptr<InFlight>&);
  /// Gone from the stateless revision (2026-07-28): nothing there to ping or subscribe to.
  bool stateful_only = false;
  /// The stateless revision marks the result cacheable.
  bool cacheable = false;
};

const Session::Method* Session::find_method(std::string_view name) noexcept {
  using Call = const std::shared_ptr<InFlight>&;
  static constexpr Method kMethods[] = {
      {"initialize", [](Session& s, Call c) { s.finish(c, s.on_initialize(*c)); }},
      {"ping", [](Session& s, Call c) { s.finish(c, json::object{}); }, true},
      {"server/discover", [](Session& s, Call c) { s.finish(c, s.on_discover()); }, false, true},
      {"tools/list", [](Session& s, Call c) { s.finish(c, s.on_tools_list(c->params())); }, false,
       true},
      {"tools/call", [](Session& s, Call c) { s.on_tools_call(c); }},
      {"resources/list", [](Session& s, Call c) { s.finish(c, s.on_resources_list(c->params())); },
       false, true},
      {"resources/templates/list",
       [](Session& s, Call c) { s.finish(c, s.on_resource_templates_list(c->params())); }, false,
       true},
      {"resources/read", [](Session& s, Call c) { s.on_resources_read(c); }, false, true},
      {"resources/subscribe",
       [](Session& s, Call c) { s.finish(c, s.on_subscribe(c->params(), true)); }, true},
      {"resources/unsubscribe",
       [](Session& s, Call c) { s.finish(c, s.on_subscribe(c->params(), false)); }, true},
      {"prompts/list", [](Session& s, Call c) { s.finish(c, s.on_prompts_list(c->params())); },
       false, true},
      {"prompts/get", [](Session& s, Call c) { s.on_prompts_get(c); }},
      {"completion/complete", [](Session& s, Call c) { s.finish(c, s.on_complete(c->params())); }},
      {"logging/setLevel", [](Session& s, Call c) { s.finish(c, s.on_set_level(c->params())); },
       true},
  };
  for (const Method& m : kMethods)
    if (m.name == name) return &m;
  return nullptr;
}

Session::Session(std::shared_ptr<Server> server, SessionOptions options)
    : server_(std::move(server)), options_(std::move(options)) {
  if (!options_.require_initialize) {
    state_ = State::ready;
    client_ = std::make_shared<const ClientInfo>(ClientInfo{options_.assumed_version, {}, {}});
  }
}

Session::~Session() {
  close();
}

void Session::close() {
  std::map<jsonrpc::Id, std::shared_ptr<InFlight>> calls;
  std::map<std::string, std::shared_ptr<PendingClientRequest>> waiting;
  {
    std::lock_guard lock(mutex_);
    state_ = State::closed;
    calls.swap(in_flight_);
    waiting.swap(awaiting_client_);
    notifications_.reset();
  }
  for (auto& [key, call] : calls) {
    call->cancel();
    call->close(std::nullopt);
  }
  for (auto& [key, pending] : waiting) {
    std::lock_guard lock(pending->mutex);
    pending->cv.notify_all();
  }
}

Session::State Session::state() const {
  std::lock_guard lock(mutex_);
  return state_;
}

std::string Session::protocol_version() const {
  std::lock_guard lock(mutex_);
  return client_->protocol_version;
}

std::size_t Session::in_flight() const {
  std::lock_guard lock(mutex_);
  return in_flight_.size();
}

void Session::set_notification_stream(StreamPtr out) {
  std::lock_guard lock(mutex_);
  notifications_ = std::move(out);
}

void Session::send_standalone(json::value message) {
  StreamPtr out;
  {
    std::lock_guard lock(mutex_);
    out = notifications_;
  }
  if (out) out->send(std::move(message));
}

bool Session::log_enabled(LogLevel level) const {
  std::lock_guard lock(mutex_);
  return !log_level_ || level >= *log_level_;
}

bool Session::subscribed(const std::string& uri) const {
  std::lock_guard lock(mutex_);
  return subscriptions_.contains(uri);
}

void Session::handle(std::string_view text, const StreamPtr& out) {
  auto parsed = jsonrpc::parse_json(text, server_->options().limits);
  if (auto* error = std::get_if<jsonrpc::Error>(&parsed)) {
    out->close(jsonrpc::make_error(std::nullopt, std::move(*error)));
    return;
  }
  handle(std::move(std::get<json::value>(parsed)), out);
}

void Session::handle(const json::value& message, const StreamPtr& out) {
  if (const auto* batch = message.if_array()) {
    handle_batch(*batch, out);
  } else {
    handle_one(jsonrpc::from_json(message), out);
  }
}

void Session::handle(json::value&& message, const StreamPtr& out) {
  if (const auto* batch = message.if_array()) {
    handle_batch(*batch, out);
  } else {
    handle_one(jsonrpc::from_json(std::move(message)), out);
  }
}

void Session::handle_batch(const json::array& batch, const StreamPtr& out) {
  const std::string version = protocol_version();
  if (!protocol::batches_allowed(version)) {
    out->close(jsonrpc::make_error(
        std::nullopt,
        {kInvalidRequest,
         fmt::format("Invalid Request: JSON-RPC batches are only part of protocol version {}; "
                     "this session uses {}",
                     protocol::k2025_03_26, version.empty() ? "none yet" : version)}));
    return;
  }
  if (batch.empty()) {
    out->close(
        jsonrpc::make_error(std::nullopt, {kInvalidRequest, "Invalid Request: empty batch"}));
    return;
  }
  auto collector = std::make_shared<BatchStream>(out, batch.size());
  for (const auto& item : batch) {
    if (item.is_array()) {
      collector->close(jsonrpc::make_error(
          std::nullopt, {kInvalidRequest, "Invalid Request: batches cannot be nested"}));
    } else {
      handle_one(jsonrpc::from_json(item), collector);
    }
  }
}

void Session::handle_one(std::variant<jsonrpc::Message, jsonrpc::Invalid> parsed,
                         const StreamPtr& out) {
  if (auto* invalid = std::get_if<jsonrpc::Invalid>(&parsed)) {
    out->close(jsonrpc::make_error(invalid->id, std::move(invalid->error)));
    return;
  }
  auto& msg = std::get<jsonrpc::Message>(parsed);
  if (auto* request = std::get_if<jsonrpc::Request>(&msg)) {
    handle_request(std::move(*request), out);
    return;
  }
  if (const auto* n = std::get_if<jsonrpc::Notification>(&msg)) {
    handle_notification(*n);
  } else {
    handle_response(std::get<jsonrpc::Response>(msg));
  }
  out->close(std::nullopt);
}

void Session::handle_notification(const jsonrpc::Notification& n) {
  if (n.method == "notifications/initialized") {
    std::lock_guard lock(mutex_);
    if (state_ == State::initializing) state_ = State::ready;
  } else if (n.method == "notifications/cancelled") {
    const auto* p = n.params.if_object();
    const auto* rid = p ? p->if_contains("requestId") : nullptr;
    if (!rid) return;
    std::optional<jsonrpc::Id> id;
    if (rid->is_string()) id = std::string(rid->get_string());
    if (rid->is_int64()) id = rid->get_int64();
    if (!id) return;
    std::shared_ptr<InFlight> call;
    {
      std::lock_guard lock(mutex_);
      auto it = in_flight_.find(*id);
      if (it == in_flight_.end() || it->second->method() == "initialize") return;
      call = it->second;
      in_flight_.erase(it);
    }
    // The spec asks for no response to a cancelled request: close its stream empty.
    call->cancel();
    call->close(std::nullopt);
  }
  // Other notifications (progress, roots/list_changed, unknown ones) need no action.
}

void Session::handle_response(const jsonrpc::Response& r) {
  if (!r.id) return;
  std::shared_ptr<PendingClientRequest> pending;
  {
    std::lock_guard lock(mutex_);
    auto it = awaiting_client_.find(jsonrpc::id_key(*r.id));
    if (it == awaiting_client_.end()) return;
    pending = it->second;
    awaiting_client_.erase(it);
  }
  std::lock_guard lock(pending->mutex);
  pending->response = r;
  pending->cv.notify_all();
}

void Session::handle_request(jsonrpc::Request request, const StreamPtr& out) {
  const std::string method = request.method;
  const jsonrpc::Id id = request.id;
  auto fail = [&](int code, std::string message, std::optional<json::value> data = {}) {
    out->close(jsonrpc::make_error(id, {code, std::move(message), std::move(data)}));
  };

  // The stateless revision names its version in every request's _meta.
  bool stateless = false;
  std::shared_ptr<const ClientInfo> client;
  const json::object* meta = jsonrpc::meta_of(request.params);
  const json::value* meta_version =
      meta ? meta->if_contains(protocol::kMetaProtocolVersion) : nullptr;
  if (meta_version && method != "initialize") {
    // Both branches string_view: `get_string() : ""` would copy into a temporary json::string.
    const std::string_view v = meta_version->is_string()
                                   ? std::string_view(meta_version->get_string())
                                   : std::string_view{};
    if (!protocol::is_supported_version(v)) {
      json::array supported;
      for (auto s : protocol::kAllVersions) supported.emplace_back(s);
      return fail(-32022, "Unsupported protocol version",
                  json::object{{"supported", std::move(supported)},
                               {"requested", meta_version->is_string() ? *meta_version : ""}});
    }
    if (v == protocol::k2026_07_28) {
      const auto* caps = meta->if_contains(protocol::kMetaClientCapabilities);
      if (!caps || !caps->is_object()) {
        return fail(kInvalidParams,
                    fmt::format("Invalid params: _meta needs \"{}\" (an object) in protocol {}",
                                protocol::kMetaClientCapabilities, protocol::k2026_07_28));
      }
      if (const Method* m = find_method(method); m != nullptr && m->stateful_only) {
        return fail(jsonrpc::kMethodNotFound,
                    fmt::format("Method not found: {} does not exist in protocol {}",
                                quoted_method(method), v));
      }
      stateless = true;
      const auto* info = meta->if_contains(protocol::kMetaClientInfo);
      client = std::make_shared<const ClientInfo>(
          ClientInfo{std::string(v), caps->get_object(),
                     info && info->is_object() ? info->get_object() : json::object{}});
    }
  }

  std::shared_ptr<InFlight> call;
  {
    std::lock_guard lock(mutex_);
    if (state_ == State::closed) {
      return out->close(
          jsonrpc::make_error(id, {kInvalidRequest, "Invalid Request: session closed"}));
    }
    if (!stateless) {
      if (method == "server/discover") {
        return out->close(jsonrpc::make_error(
            id, {kInvalidParams,
                 fmt::format("Invalid params: server/discover needs params._meta with \"{}\" and "
                             "\"{}\"",
                             protocol::kMetaProtocolVersion, protocol::kMetaClientCapabilities)}));
      }
      if (state_ == State::awaiting_initialize && method != "initialize" && method != "ping") {
        return out->close(jsonrpc::make_error(
            id, {kInvalidRequest,
                 fmt::format("Invalid Request: {} before initialize; send initialize first (or "
                             "name protocol version {} in params._meta)",
                             method, protocol::k2026_07_28)}));
      }
      if (method == "initialize" && state_ != State::awaiting_initialize) {
        return out->close(jsonrpc::make_error(
            id, {kInvalidRequest, "Invalid Request: the session is already initialized"}));
      }
      client = client_;
    }
    if (in_flight_.contains(id)) {
      return out->close(jsonrpc::make_error(
          id,
          {kInvalidRequest, "Invalid Request: this id is already used by a request in flight"}));
    }
    if (in_flight_.size() >= server_->options().max_in_flight_per_session) {
      return out->close(jsonrpc::make_error(
          id,
          {kInvalidRequest, fmt::format("Invalid Request: too many requests in flight (limit {})",
                                        server_->options().max_in_flight_per_session)}));
    }
    call = std::make_shared<InFlight>(weak_from_this(), std::move(request), out, std::move(client),
                                      stateless);
    in_flight_.emplace(call->id(), call);
  }

  try {
    const Method* m = find_method(method);
    if (m == nullptr)
      throw ProtocolError(jsonrpc::kMethodNotFound, "Method not found: " + quoted_method(method));
    m->answer(*this, call);
  } catch (const ProtocolError& e) {
    finish_error(call, e.error());
  } catch (const std::exception& e) {
    finish_error(call, {jsonrpc::kInternalError, std::string("Internal error: ") + e.what()});
  }
}

void Session::finish(const std::shared_ptr<InFlight>& call, json::value result) {
  if (call->stateless() && result.is_object()) {
    auto& o = result.get_object();
    o["resultType"] = "complete";
    if (const Method* m = find_method(call->method()); m != nullptr && m->cacheable) {
      o["ttlMs"] = 0;
      o["cacheScope"] = "public";
    }
    json::object meta;
    if (auto* m = o.if_contains("_meta"); m && m->is_object()) meta = m->get_object();
    meta[protocol::kMetaServerInfo] = server_->server_info();
    o["_meta"] = std::move(meta);
  }
  release(call);
  call->close(jsonrpc::make_result(call->id(), std::move(result)));
}

void Session::finish_error(const std::shared_ptr<InFlight>& call, jsonrpc::Error error) {
  // The stateless revision retired -32002 in favour of invalid params.
  if (call->stateless() && error.code == jsonrpc::kResourceNotFound) error.code = kInvalidParams;
  release(call);
  call->close(jsonrpc::make_error(call->id(), std::move(error)));
}

void Session::release(const std::shared_ptr<InFlight>& call) {
  std::lock_guard lock(mutex_);
  auto it = in_flight_.find(call->id());
  if (it != in_flight_.end() && it->second == call) in_flight_.erase(it);
}

json::value Session::on_initialize(const InFlight& call) {
  const json::object& p = call.params_object();
  std::string requested;
  if (const auto* v = p.if_contains("protocolVersion")) {
    if (!v->is_string()) {
      throw ProtocolError(kInvalidParams, "Invalid params: protocolVersion must be a string");
    }
    requested = v->get_string();
  }
  const auto* caps = p.if_contains("capabilities");
  if (caps && !caps->is_object()) {
    throw ProtocolError(kInvalidParams, "Invalid params: capabilities must be an object");
  }
  const auto* info = p.if_contains("clientInfo");
  if (info && !info->is_object()) {
    throw ProtocolError(kInvalidParams, "Invalid params: clientInfo must be an object");
  }
  const std::string version(protocol::negotiate(requested));
  {
    std::lock_guard lock(mutex_);
    client_ = std::make_shared<const ClientInfo>(
        ClientInfo{version, caps ? caps->get_object() : json::object{},
                   info ? info->get_object() : json::object{}});
    state_ = State::initializing;
  }
  json::object result{{"protocolVersion", version},
                      {"capabilities", server_->capabilities(version)},
                      {"serverInfo", server_->server_info()}};
  if (!server_->options().instructions.empty()) {
    result["instructions"] = server_->options().instructions;
  }
  return result;
}

json::value Session::on_discover() {
  json::array versions;
  for (auto v : protocol::kAllVersions) versions.emplace_back(v);
  json::object result{{"supportedVersions", std::move(versions)},
                      {"capabilities", server_->capabilities(protocol::k2026_07_28)}};
  if (!server_->options().instructions.empty()) {
    result["instructions"] = server_->options().instructions;
  }
  return result;
}

json::value Session::on_set_level(const json::value& params) {
  const auto* p = params.if_object();
  const auto* level = p ? p->if_contains("level") : nullptr;
  std::optional<LogLevel> parsed;
  if (level && level->is_string()) parsed = parse_log_level(level->get_string());
  if (!parsed) {
    throw ProtocolError(kInvalidParams,
                        "Invalid params: level must be one of debug, info, notice, warning, error, "
                        "critical, alert, emergency");
  }
  std::lock_guard lock(mutex_);
  log_level_ = parsed;
  return json::object{};
}

json::value Session::request_client(InFlight& call, std::string_view method, json::value params,
                                    std::optional<std::chrono::milliseconds> timeout) {
  if (call.stateless()) {
    throw ProtocolError(
        -32021, fmt::format("{} cannot be sent in protocol {}", method, protocol::k2026_07_28));
  }
  static constexpr std::pair<std::string_view, std::string_view> kNeeds[] = {
      {"sampling/createMessage", "sampling"},
      {"elicitation/create", "elicitation"},
      {"roots/list", "roots"}};
  for (const auto& [m, capability] : kNeeds) {
    if (m == method && !call.client().capabilities.contains(capability)) {
      throw ProtocolError(kInvalidRequest,
                          fmt::format("the client did not declare the {} capability", capability));
    }
  }

  auto pending = std::make_shared<PendingClientRequest>();
  jsonrpc::Id id;
  {
    std::lock_guard lock(mutex_);
    if (state_ == State::closed) throw ProtocolError(jsonrpc::kRequestCancelled, "session closed");
    id = fmt::format("s{}", next_request_id_++);
    awaiting_client_.emplace(jsonrpc::id_key(id), pending);
  }
  call.send(jsonrpc::make_request(id, method, std::move(params)));

  const auto deadline = std::chrono::steady_clock::now() +
                        timeout.value_or(server_->options().client_request_timeout);
  const std::stop_token token = call.stop_token();
  // Registered before taking the lock: it runs at once when the request is already cancelled.
  std::stop_callback wake(token, [&] {
    std::lock_guard l(pending->mutex);
    pending->cv.notify_all();
  });
  std::unique_lock lock(pending->mutex);
  const bool answered = pending->cv.wait_until(lock, deadline, [&] {
    return pending->response.has_value() || token.stop_requested() || state() == State::closed;
  });
  if (answered && pending->response) {
    if (pending->response->is_error())
      throw ProtocolError(pending->response->error().code, pending->response->error().message,
                          pending->response->error().data);
    return pending->response->result();
  }
  lock.unlock();
  {
    std::lock_guard l(mutex_);
    awaiting_client_.erase(jsonrpc::id_key(id));
  }
  // Tell the client to stop working on a request nobody waits for any more. After a
  // cancellation the request's own stream is closed, so this goes on the standalone stream.
  const bool was_cancelled = token.stop_requested();
  json::value cancel = jsonrpc::make_notification(
      "notifications/cancelled",
      json::object{
          {"requestId", jsonrpc::to_json(id)},
          {"reason", was_cancelled ? "the request that asked was cancelled" : "timed out"}});
  if (was_cancelled) {
    send_standalone(std::move(cancel));
    throw ProtocolError(jsonrpc::kRequestCancelled, fmt::format("{} was cancelled", method));
  }
  call.send(std::move(cancel));
  throw ProtocolError(jsonrpc::kRequestTimeout,
                      fmt::format("the client did not answer {} in time", method));
}

}  // namespace mcpclass::server
