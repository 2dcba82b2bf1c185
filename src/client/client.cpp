// The client engine: correlation, timeouts, cancellation, progress and the handshake.
#include "mcpclass/client/client.hpp"

#include "client/server_requests.hpp"
#include "mcpclass/protocol/version.hpp"
#include "mcpclass/util/executor.hpp"
#include "mcpclass/util/json_fields.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <future>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <utility>

namespace mcpclass::client {

namespace {

struct Pending {
  std::promise<jsonrpc::Response> promise;
  std::function<void(const json::object&)> on_progress;
  std::string progress_key;
};

const json::object& require_object(const json::value& v, std::string_view what) {
  if (!v.is_object()) throw ProtocolViolation(fmt::format("{}: result is not an object", what));
  return v.get_object();
}

using util::string_or_empty;

json::object object_or_empty(const json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  return v != nullptr && v->is_object() ? v->get_object() : json::object();
}

}  // namespace

struct Client::Impl : std::enable_shared_from_this<Impl> {
  Impl(std::shared_ptr<ClientTransport> t, ClientOptions o)
      : transport(std::move(t)), options(std::move(o)) {}

  std::shared_ptr<ClientTransport> transport;
  ClientOptions options;
  std::atomic<std::int64_t> next_id{1};
  std::atomic<bool> is_connected{false};
  std::atomic<bool> stateless{false};

  mutable std::mutex mutex;
  std::map<std::string, std::shared_ptr<Pending>> pending;
  std::map<std::string, std::shared_ptr<Pending>> by_progress;
  ServerDescription description;
  std::unique_ptr<util::ThreadPool> workers;

  void log(std::string_view line) const {
    if (options.callbacks.on_log) options.callbacks.on_log(line);
  }

  json::object capabilities() const {
    json::object caps;
    const auto& cb = options.callbacks;
    if (cb.sampling) caps["sampling"] = json::object{};
    if (cb.elicitation)
      caps["elicitation"] = protocol::at_least(options.protocol_version, protocol::k2025_11_25)
                                ? json::object{{"form", json::object{}}}
                                : json::object{};
    if (cb.roots) caps["roots"] = json::object{{"listChanged", true}};
    return caps;
  }

  json::object client_info() const {
    return {{"name", options.name}, {"version", options.version}};
  }

  std::shared_ptr<Pending> take(const std::string& key) {
    std::lock_guard lock(mutex);
    auto it = pending.find(key);
    if (it == pending.end()) return nullptr;
    auto p = it->second;
    pending.erase(it);
    if (!p->progress_key.empty()) by_progress.erase(p->progress_key);
    return p;
  }

  void fail_all(const std::string& reason) {
    std::map<std::string, std::shared_ptr<Pending>> failed;
    {
      std::lock_guard lock(mutex);
      failed.swap(pending);
      by_progress.clear();
    }
    for (auto& [key, p] : failed)
      p->promise.set_exception(std::make_exception_ptr(TransportError(reason)));
  }

  // --- incoming -------------------------------------------------------------------------------

  void on_message(const json::value& v) {
    if (v.is_array()) {
      for (const auto& item : v.get_array()) on_message(item);
      return;
    }
    auto parsed = jsonrpc::from_json(v);
    if (auto* invalid = std::get_if<jsonrpc::Invalid>(&parsed)) {
      // E.g. `{"jsonrpc":"2.0","result":{}}` answering a notification: tolerated, ignored.
      log(fmt::format("ignored invalid message from server: {}", invalid->error.message));
      return;
    }
    auto& message = std::get<jsonrpc::Message>(parsed);
    if (auto* response = std::get_if<jsonrpc::Response>(&message)) {
      if (!response->id) return;
      if (auto p = take(jsonrpc::id_key(*response->id))) p->promise.set_value(std::move(*response));
      return;
    }
    if (auto* request = std::get_if<jsonrpc::Request>(&message)) {
      std::weak_ptr<Impl> weak = weak_from_this();
      auto job = [weak, request = std::move(*request)]() mutable {
        if (auto self = weak.lock()) self->answer(request);
      };
      std::lock_guard lock(mutex);
      if (workers) workers->post(std::move(job));
      return;
    }
    on_notification(std::get<jsonrpc::Notification>(message));
  }

  void on_notification(const jsonrpc::Notification& n) {
    const auto& cb = options.callbacks;
    if (n.method == "notifications/progress" && n.params.is_object()) {
      const auto* token = n.params.get_object().if_contains("progressToken");
      std::shared_ptr<Pending> p;
      if (token != nullptr && (token->is_int64() || token->is_string())) {
        const jsonrpc::Id id = token->is_int64() ? jsonrpc::Id{token->get_int64()}
                                                 : jsonrpc::Id{std::string(token->get_string())};
        std::lock_guard lock(mutex);
        if (auto it = by_progress.find(jsonrpc::id_key(id)); it != by_progress.end())
          p = it->second;
      }
      if (p && p->on_progress) p->on_progress(n.params.get_object());
      return;
    }
    if (n.method == "notifications/message" && n.params.is_object()) {
      if (cb.on_log_message) cb.on_log_message(n.params.get_object());
      return;
    }
    if (cb.on_notification) cb.on_notification(n.method, n.params);
  }

  void answer(const jsonrpc::Request& request) {
    json::object reply;
    try {
      reply = jsonrpc::make_result(request.id, answer_server_request(request, options));
    } catch (const jsonrpc::ProtocolError& e) {
      reply = jsonrpc::make_error(request.id, e.error());
    } catch (const std::exception& e) {
      reply = jsonrpc::make_error(request.id, {jsonrpc::kInternalError, e.what()});
    }
    try {
      transport->send(reply);
    } catch (const std::exception& e) {
      log(fmt::format("could not answer {}: {}", request.method, e.what()));
    }
  }

  // --- outgoing -------------------------------------------------------------------------------

  void add_meta(json::object& params) const {
    json::object meta = object_or_empty(params, "_meta");
    meta[protocol::kMetaProtocolVersion] = protocol::k2026_07_28;
    meta[protocol::kMetaClientCapabilities] = capabilities();
    meta[protocol::kMetaClientInfo] = client_info();
    params["_meta"] = std::move(meta);
  }

  json::value request(std::string_view method, json::object params, const RequestOptions& ro) {
    const std::int64_t id = next_id++;
    const std::string key = jsonrpc::id_key(jsonrpc::Id{id});
    auto p = std::make_shared<Pending>();
    auto future = p->promise.get_future();
    if (ro.on_progress) {
      json::object meta = object_or_empty(params, "_meta");
      meta["progressToken"] = id;
      params["_meta"] = std::move(meta);
      p->on_progress = ro.on_progress;
      p->progress_key = key;
    }
    if (!ro.meta.empty()) {
      json::object meta = object_or_empty(params, "_meta");
      for (const auto& [name, value] : ro.meta) meta[name] = value;
      params["_meta"] = std::move(meta);
    }
    if (stateless) add_meta(params);
    {
      std::lock_guard lock(mutex);
      pending[key] = p;
      if (!p->progress_key.empty()) by_progress[key] = p;
    }
    try {
      transport->send(jsonrpc::make_request(jsonrpc::Id{id}, method, std::move(params)));
    } catch (...) {
      take(key);
      throw;
    }
    const auto timeout = ro.timeout.value_or(options.request_timeout);
    if (future.wait_for(timeout) == std::future_status::timeout && take(key)) {
      if (method != "initialize") {
        try {
          transport->send(jsonrpc::make_notification(
              "notifications/cancelled",
              json::object{{"requestId", id},
                           {"reason", fmt::format("timed out after {} ms", timeout.count())}}));
        } catch (const std::exception&) {
          // The transport is gone; the timeout is still the answer.
        }
      }
      transport->abandon(jsonrpc::Id{id});
      throw TimeoutError(fmt::format("{} timed out after {} ms", method, timeout.count()));
    }
    jsonrpc::Response response = future.get();
    if (response.is_error()) throw RpcError(response.error());
    json::value result = response.result();
    if (stateless && result.is_object()) {
      const auto type = string_or_empty(result.get_object(), "resultType");
      if (!type.empty() && type != "complete")
        throw ProtocolViolation(fmt::format("{}: unsupported resultType '{}'", method, type));
    }
    return result;
  }

  void notify(std::string_view method, json::object params) {
    transport->send(jsonrpc::make_notification(method, std::move(params)));
  }

  // --- lifecycle ------------------------------------------------------------------------------

  void initialize() {
    json::object params{{"protocolVersion", options.protocol_version},
                        {"capabilities", capabilities()},
                        {"clientInfo", client_info()}};
    const json::value v = request("initialize", std::move(params), {});
    const auto& result = require_object(v, "initialize");
    ServerDescription d;
    d.protocol_version = string_or_empty(result, "protocolVersion");
    if (!protocol::is_handshake_version(d.protocol_version))
      throw ProtocolViolation(
          fmt::format("server chose unsupported protocol version '{}'", d.protocol_version));
    d.capabilities = object_or_empty(result, "capabilities");
    d.server_info = object_or_empty(result, "serverInfo");
    d.instructions = string_or_empty(result, "instructions");
    transport->set_protocol_version(d.protocol_version);
    {
      std::lock_guard lock(mutex);
      description = std::move(d);
    }
    notify("notifications/initialized", {});
  }

  void discover() {
    stateless = true;
    try {
      const json::value v = request("server/discover", {}, {});
      const auto& result = require_object(v, "server/discover");
      const auto* versions = result.if_contains("supportedVersions");
      const bool supported = versions != nullptr && versions->is_array() &&
                             std::ranges::any_of(versions->get_array(), [](const json::value& x) {
                               return x.is_string() && x.get_string() == protocol::k2026_07_28;
                             });
      if (!supported)
        throw ProtocolViolation("server/discover: the server does not support 2026-07-28");
      ServerDescription d;
      d.protocol_version = protocol::k2026_07_28;
      d.capabilities = object_or_empty(result, "capabilities");
      d.server_info = object_or_empty(object_or_empty(result, "_meta"), protocol::kMetaServerInfo);
      if (d.server_info.empty()) d.server_info = object_or_empty(result, "serverInfo");
      d.instructions = string_or_empty(result, "instructions");
      transport->set_protocol_version(protocol::k2026_07_28);
      std::lock_guard lock(mutex);
      description = std::move(d);
    } catch (...) {
      stateless = false;
      throw;
    }
  }

  void handshake() {
    switch (options.era) {
      case Era::handshake:
        initialize();
        return;
      case Era::stateless:
        discover();
        return;
      case Era::automatic:
        try {
          discover();
        } catch (const TransportError&) {
          throw;
        } catch (const ClientError& e) {
          log(fmt::format("server/discover failed ({}); falling back to initialize", e.what()));
          initialize();
        }
        return;
    }
  }

  void start() {
    {
      std::lock_guard lock(mutex);
      workers = std::make_unique<util::ThreadPool>(2);
    }
    std::weak_ptr<Impl> weak = weak_from_this();
    TransportHandlers handlers;
    handlers.on_message = [weak](json::value m) {
      if (auto self = weak.lock()) self->on_message(m);
    };
    handlers.on_failure = [weak](std::optional<jsonrpc::Id> id, std::string reason) {
      auto self = weak.lock();
      if (!self) return;
      if (!id) {
        self->log(reason);
        return;
      }
      if (auto p = self->take(jsonrpc::id_key(*id)))
        p->promise.set_exception(std::make_exception_ptr(TransportError(reason)));
    };
    handlers.on_request_error = [weak](const jsonrpc::Id& id, std::exception_ptr error) {
      auto self = weak.lock();
      if (!self) return;
      if (auto p = self->take(jsonrpc::id_key(id))) p->promise.set_exception(std::move(error));
    };
    handlers.on_closed = [weak](std::string reason) {
      auto self = weak.lock();
      if (!self) return;
      self->is_connected = false;
      self->log(fmt::format("connection closed: {}", reason));
      self->fail_all(fmt::format("{}: {}", self->transport->describe(), reason));
    };
    handlers.on_log = [weak](std::string_view line) {
      if (auto self = weak.lock()) self->log(line);
    };
    transport->start(std::move(handlers));
  }

  void stop() {
    is_connected = false;
    transport->close();
    fail_all(transport->describe() + ": client closed");
    std::unique_ptr<util::ThreadPool> pool;
    {
      std::lock_guard lock(mutex);
      pool = std::move(workers);
    }
    if (pool) pool->stop();
    stateless = false;
  }
};

Client::Client(std::shared_ptr<ClientTransport> transport, ClientOptions options)
    : impl_(std::make_shared<Impl>(std::move(transport), std::move(options))) {
  if (!impl_->transport) throw std::invalid_argument("Client: no transport");
  if (impl_->options.request_timeout <= std::chrono::milliseconds::zero())
    impl_->options.request_timeout = std::chrono::milliseconds{30'000};
}

Client::~Client() {
  close();
}

const ServerDescription& Client::connect() {
  impl_->start();
  try {
    impl_->handshake();
  } catch (...) {
    impl_->stop();
    throw;
  }
  impl_->is_connected = true;
  return impl_->description;
}

const ServerDescription& Client::reconnect() {
  close();
  return connect();
}

void Client::close() {
  impl_->stop();
}

bool Client::connected() const {
  return impl_->is_connected && impl_->transport->is_open();
}

ServerDescription Client::server() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->description;
}

json::value Client::request(std::string_view method, json::object params,
                            const RequestOptions& options) {
  return impl_->request(method, std::move(params), options);
}

void Client::notify(std::string_view method, json::object params) {
  impl_->notify(method, std::move(params));
}

namespace {

json::array list_all(Client& client, std::string_view method, std::string_view key,
                     const RequestOptions& options) {
  json::array all;
  std::set<std::string> seen;
  std::string cursor;
  for (;;) {
    json::object params;
    if (!cursor.empty()) params["cursor"] = cursor;
    const json::value v = client.request(method, std::move(params), options);
    const auto& page = require_object(v, method);
    const auto* items = page.if_contains(key);
    if (items == nullptr || !items->is_array())
      throw ProtocolViolation(fmt::format("{}: result has no '{}' array", method, key));
    for (const auto& item : items->get_array()) all.push_back(item);
    cursor = string_or_empty(page, "nextCursor");
    if (cursor.empty()) return all;
    if (!seen.insert(cursor).second)
      throw ProtocolViolation(fmt::format("{}: the server repeated cursor '{}'", method, cursor));
  }
}

}  // namespace

json::array Client::list_tools(const RequestOptions& options) {
  return list_all(*this, "tools/list", "tools", options);
}

json::object Client::call_tool(std::string_view name, std::optional<json::object> arguments,
                               const RequestOptions& options) {
  json::object params{{"name", name}};
  if (arguments) params["arguments"] = std::move(*arguments);
  return require_object(request("tools/call", std::move(params), options), "tools/call");
}

json::array Client::list_resources(const RequestOptions& options) {
  return list_all(*this, "resources/list", "resources", options);
}

json::object Client::read_resource(std::string_view uri, const RequestOptions& options) {
  return require_object(request("resources/read", {{"uri", uri}}, options), "resources/read");
}

json::array Client::list_prompts(const RequestOptions& options) {
  return list_all(*this, "prompts/list", "prompts", options);
}

json::object Client::get_prompt(std::string_view name, json::object arguments,
                                const RequestOptions& options) {
  json::object params{{"name", name}};
  if (!arguments.empty()) params["arguments"] = std::move(arguments);
  return require_object(request("prompts/get", std::move(params), options), "prompts/get");
}

void Client::ping(const RequestOptions& options) {
  request("ping", {}, options);
}

void Client::set_logging_level(std::string_view level) {
  request("logging/setLevel", {{"level", level}});
}

void Client::notify_roots_changed() {
  notify("notifications/roots/list_changed");
}

void choose_protocol(ClientOptions& options, std::string_view protocol) {
  if (protocol == "auto") {
    options.era = Era::automatic;
  } else if (protocol == protocol::k2026_07_28) {
    options.era = Era::stateless;
  } else if (protocol::is_handshake_version(protocol)) {
    options.era = Era::handshake;
    options.protocol_version = std::string(protocol);
  } else {
    throw std::invalid_argument(fmt::format(
        "unknown protocol '{}': use auto, 2026-07-28, 2025-11-25, 2025-06-18, 2025-03-26 or "
        "2024-11-05",
        protocol));
  }
}

}  // namespace mcpclass::client
