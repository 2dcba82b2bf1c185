// Streamable HTTP on /mcp: POST (one message or a batch, answered as JSON or as an SSE stream,
// with sessions or stateless), DELETE, and the checks a JSON-RPC body passes first.
#include "transport/server/http/connection.hpp"

#include "mcpclass/jsonrpc/message.hpp"
#include "mcpclass/protocol/version.hpp"
#include "mcpclass/server/session.hpp"
#include "transport/server/http/guard.hpp"
#include "transport/server/http/rpc_message.hpp"

#include <atomic>
#include <boost/json.hpp>

#include <fmt/format.h>

#include <functional>
#include <mutex>

namespace mcpclass::transport {

namespace http = boost::beast::http;
namespace json = boost::json;

namespace {

// A 2026-07-28 request names its protocol version in params._meta and needs no session.
bool names_version_in_meta(const json::object* message) {
  const json::value* params = message ? message->if_contains("params") : nullptr;
  const json::object* meta = params ? jsonrpc::meta_of(*params) : nullptr;
  const json::value* version = meta ? meta->if_contains(protocol::kMetaProtocolVersion) : nullptr;
  return version && version->is_string();
}

// The engine's view of one POST /mcp: events go to the POST's SSE channel (the connection switches
// to SSE on the first one), the final message is the JSON body or the stream's last event.
// `resumable`: the SSE stream starts with a priming event id, so it may be closed early and
// resumed by the client (close_for_reconnect).
class PostStream final : public server::Stream {
 public:
  // `sse_only`: the client does not accept JSON, so even a lone answer goes out as an SSE event.
  PostStream(std::shared_ptr<HttpShared> shared, std::shared_ptr<Connection> connection,
             std::shared_ptr<SseChannel> channel, std::shared_ptr<SseChannel> fallback,
             bool resumable, std::function<void(bool error)> on_close, bool sse_only)
      : shared_(std::move(shared)),
        connection_(connection),
        exchange_(connection->exchange()),
        channel_(std::move(channel)),
        fallback_(std::move(fallback)),
        resumable_(resumable && channel_ != nullptr),
        on_close_(std::move(on_close)),
        started_(sse_only && channel_ != nullptr) {
    shared_->hold_stream();
  }
  ~PostStream() override { release(); }

  void send(json::value message) override {
    std::shared_ptr<SseChannel> target;
    {
      std::lock_guard lock(mutex_);
      if (closed_) return;
      if (channel_) started_ = true;
      target = channel_ ? channel_ : fallback_;
    }
    if (target) target->append(message);
  }

  bool close_for_reconnect() override {
    std::shared_ptr<Connection> connection;
    {
      std::lock_guard lock(mutex_);
      if (closed_ || !resumable_) return false;
      started_ = true;  // from now on everything, the result included, goes through the channel
      connection = connection_;
    }
    connection->post_to_self(
        [connection, exchange = exchange_] { connection->end_stream_for_reconnect(exchange); });
    return true;
  }

  void close(std::optional<json::value> final_message) override {
    bool started = false;
    {
      std::lock_guard lock(mutex_);
      if (closed_) return;
      closed_ = true;
      started = started_;
    }
    if (on_close_) on_close_(is_error_message(final_message));
    if (started) {
      channel_->finish(std::move(final_message));
      {
        std::lock_guard lock(mutex_);
        connection_.reset();
      }
      release();
      return;
    }
    if (channel_) channel_->finish();
    std::shared_ptr<Connection> connection;
    {
      std::lock_guard lock(mutex_);
      connection = std::move(connection_);
    }
    if (connection) {
      connection->post_to_self(
          [connection, exchange = exchange_, final_message = std::move(final_message)]() mutable {
            connection->on_final(exchange, std::move(final_message));
          });
    }
    connection.reset();
    release();
  }

 private:
  void release() {
    if (!released_.exchange(true)) shared_->release_stream();
  }

  std::shared_ptr<HttpShared> shared_;
  // Strong until close: while the engine works nothing else keeps the connection alive.
  std::shared_ptr<Connection> connection_;
  const std::uint64_t exchange_;
  std::shared_ptr<SseChannel> channel_;
  std::shared_ptr<SseChannel> fallback_;
  const bool resumable_;
  std::function<void(bool)> on_close_;
  std::mutex mutex_;
  bool started_ = false;
  bool closed_ = false;
  std::atomic<bool> released_{false};
};

}  // namespace

void Connection::on_final(std::uint64_t exchange, std::optional<json::value> final_message) {
  if (exchange != exchange_ || mode_ != Mode::waiting) return;
  Headers headers;
  if (init_entry_) {
    const bool ok = final_message && final_message->is_object() &&
                    final_message->get_object().contains("result");
    if (ok) {
      headers.emplace_back(kSessionHeader, init_entry_->id);
    } else {
      shared_->sessions->remove(init_entry_->id);
      init_entry_.reset();
    }
  }
  if (!final_message && awaiting_answer_) {
    return respond(http::status::service_unavailable,
                   rpc_error_body(jsonrpc::kInternalError, kCancelledBeforeAnswer),
                   "application/json", std::move(headers));
  }
  if (!final_message) return respond(http::status::accepted, {}, {}, std::move(headers));
  respond(http::status::ok, json::serialize(*final_message), "application/json",
          std::move(headers));
}

// Checks Content-Type and MCP-Protocol-Version, parses the body. Responds and returns nullopt
// when the request is refused.
std::optional<json::value> Connection::read_rpc_body(const Request& req) {
  if (!media_type_is(req[http::field::content_type], "application/json")) {
    respond(http::status::unsupported_media_type,
            rpc_error_body(jsonrpc::kInvalidRequest,
                           "Unsupported Media Type: Content-Type must be application/json"));
    return std::nullopt;
  }
  const std::string_view version = req[kVersionHeader];
  if (!version.empty() && !protocol::is_supported_version(version)) {
    respond(http::status::bad_request,
            rpc_error_body(jsonrpc::kInvalidRequest,
                           fmt::format("Bad Request: unsupported MCP-Protocol-Version {}",
                                       std::string(version))));
    return std::nullopt;
  }
  auto parsed = jsonrpc::parse_json(req.body(), shared_->server->options().limits);
  if (auto* error = std::get_if<jsonrpc::Error>(&parsed)) {
    respond(http::status::bad_request,
            json::serialize(jsonrpc::make_error(std::nullopt, std::move(*error))));
    return std::nullopt;
  }
  return std::move(std::get<json::value>(parsed));
}

// Looks up the session a request names; responds 400/404 and returns nullptr when it cannot.
void Connection::session_not_found() {
  respond(http::status::not_found, rpc_error_body(jsonrpc::kInvalidRequest, "Session not found"));
}

std::shared_ptr<HttpSession> Connection::find_session(std::string_view id) {
  if (id.empty()) {
    respond(
        http::status::bad_request,
        rpc_error_body(jsonrpc::kInvalidRequest, "Bad Request: Mcp-Session-Id header is required"));
    return nullptr;
  }
  auto entry = shared_->sessions->acquire(std::string(id));
  if (entry && entry->legacy) entry->end();
  if (!entry || entry->legacy) {
    session_not_found();
    return nullptr;
  }
  return entry;
}

void Connection::post_mcp(const Request& req) {
  auto body = read_rpc_body(req);
  if (!body || !scopes_allow(*body)) return;
  const json::value& message = *body;
  const json::object* object = message.if_object();
  const json::value* method = object ? object->if_contains("method") : nullptr;
  const bool initialize = method && method->is_string() && method->get_string() == "initialize";
  const bool answers = has_request(message);
  const bool sse_ok = lists_event_stream(req[http::field::accept]);
  // initialize stays JSON: on_final() attaches or drops the new session with its answer.
  const bool sse_only =
      sse_ok && !initialize && !accepts(req[http::field::accept], "application/json");
  const std::string method_name(HttpMetrics::method_label(method_of(message)));
  std::string version(req[kVersionHeader]);

  auto metrics = shared_->metrics;
  std::shared_ptr<server::Session> session;
  std::shared_ptr<SseChannel> channel;
  std::shared_ptr<SseChannel> fallback;
  std::function<void(bool)> on_close;

  // Served like stateless mode: on a stateless server, and for a request of the stateless era
  // without a session id even where sessions are kept for the handshake eras.
  const bool self_contained =
      shared_->options.stateless ||
      (!initialize && req[kSessionHeader].empty() && names_version_in_meta(object));
  if (self_contained) {
    server::SessionOptions options;
    options.require_initialize = initialize;
    if (protocol::is_handshake_version(version)) options.assumed_version = version;
    session = shared_->server->create_session(options);
    shared_->sessions->add_transient(session);
    guard_.emplace(*shared_, nullptr);
    if (sse_ok && answers) channel = std::make_shared<SseChannel>("s", false, 1);
    on_close = [metrics, answers, method_name, sessions = shared_->sessions,
                weak = std::weak_ptr<server::Session>(session)](bool error) {
      if (answers) metrics->record_rpc(method_name, error);
      if (auto s = weak.lock()) sessions->remove_transient(s);
    };
  } else {
    std::shared_ptr<HttpSession> entry;
    if (initialize) {
      entry = shared_->sessions->create(false);
      if (!entry) {
        return respond(
            http::status::service_unavailable,
            rpc_error_body(jsonrpc::kInternalError, "Service Unavailable: too many sessions"));
      }
      init_entry_ = entry;
    } else {
      entry = find_session(req[kSessionHeader]);
      if (!entry) return;
      guard_.emplace(*shared_, entry, RequestGuard::Adopt{});
      // Deleted (or shut down) after the lookup: the id names no session any more.
      if (entry->session->state() == server::Session::State::closed) {
        return session_not_found();
      }
    }
    session = entry->session;
    if (!guard_) guard_.emplace(*shared_, entry);
    priming_allowed_ = initialize ? false : session->protocol_version() >= protocol::k2025_11_25;
    if (sse_ok && answers) channel = entry->open_channel(shared_->options.event_store_size);
    fallback = entry->standalone;
    on_close = [metrics, answers, method_name](bool error) {
      if (answers) metrics->record_rpc(method_name, error);
    };
  }

  channel_ = channel;
  if (channel) {
    // Before the engine runs: the priming event's id must precede every event of the stream.
    priming_ = channel->resumable() ? channel->priming_frame(shared_->options.sse_retry_ms) : "";
    sink_token_ = channel->attach(make_sink(), std::nullopt);
  }
  mode_ = Mode::waiting;
  awaiting_answer_ = answers;
  const bool resumable = channel && channel->resumable() && priming_allowed_;
  auto stream = std::make_shared<PostStream>(shared_, shared_from_this(), channel, fallback,
                                             resumable, on_close, sse_only);
  try {
    session->handle(std::move(*body), stream);
  } catch (const std::exception& e) {
    stream->close(jsonrpc::make_error(std::nullopt, {jsonrpc::kInternalError, e.what()}));
  }
}

void Connection::delete_mcp(const Request& req) {
  const std::string_view id = req[kSessionHeader];
  auto entry = find_session(id);
  if (!entry) return;
  entry->end();
  shared_->sessions->remove(std::string(id));
  respond(http::status::ok, {});
}

}  // namespace mcpclass::transport
