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
// The channel is opened with the first event (or close_for_reconnect) when the client also takes
// JSON: most calls send none, and a channel per call was a third of the locks a call took.
// `resumable`: the SSE stream starts with a priming event id, so it may be closed early and
// resumed by the client (close_for_reconnect).
class PostStream final : public server::Stream {
 public:
  // `channel`: opened already (the client takes only SSE), or nullptr to open one on the first
  // event when `opener` is set (the client takes SSE and the message asks for an answer).
  PostStream(std::shared_ptr<HttpShared> shared, std::shared_ptr<Connection> connection,
             std::shared_ptr<SseChannel> channel, ChannelOpener opener,
             std::shared_ptr<SseChannel> fallback, bool resumable,
             std::function<void(bool error)> on_close)
      : shared_(std::move(shared)),
        connection_(connection),
        exchange_(connection->exchange()),
        channel_(std::move(channel)),
        opener_(std::move(opener)),
        fallback_(std::move(fallback)),
        resumable_(resumable && (channel_ || opener_)),
        on_close_(std::move(on_close)),
        started_(channel_ != nullptr) {
    shared_->hold_stream();
  }
  ~PostStream() override { release(); }

  void send(json::value message) override {
    std::shared_ptr<SseChannel> target;
    {
      std::lock_guard lock(mutex_);
      if (closed_) return;
      if (open_channel()) started_ = true;
      target = channel_ ? channel_ : fallback_;
      posted_ = posted_ || target == channel_;
    }
    if (target) target->append(message);
  }

  bool close_for_reconnect() override {
    std::shared_ptr<Connection> connection;
    {
      std::lock_guard lock(mutex_);
      if (closed_ || !resumable_ || !open_channel()) return false;
      started_ = true;  // from now on everything, the result included, goes through the channel
      posted_ = true;
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
      std::shared_ptr<Connection> connection;
      bool posted = false;
      {
        std::lock_guard lock(mutex_);
        connection = std::move(connection_);
        posted = posted_;
      }
      // An inline tool's answer on a stream that carried nothing yet: written now, on the
      // strand, instead of through the channel's sink and a post (which wakes the other I/O
      // thread). With events before it, those are still on their way: the answer follows them.
      if (connection && !posted && connection->on_own_strand()) {
        connection->on_frame(exchange_, channel_->finish_to_caller(std::move(final_message)), true);
      } else {
        channel_->finish(std::move(final_message));
      }
      release();
      return;
    }
    std::shared_ptr<Connection> connection;
    {
      std::lock_guard lock(mutex_);
      connection = std::move(connection_);
    }
    if (connection) {
      connection->run_on_self(
          [connection, exchange = exchange_, final_message = std::move(final_message)]() mutable {
            connection->on_final(exchange, std::move(final_message));
          });
    }
    connection.reset();
    release();
  }

 private:
  // mutex_ held. The channel, opened now if it can be; the connection learns of it before any
  // of its frames (both are posted to its strand, in this order).
  bool open_channel() {
    if (channel_) return true;
    if (!opener_ || !connection_) return false;
    auto opened = opener_();
    opener_ = nullptr;
    const std::uint64_t token =
        opened.channel->attach(connection_->make_sink(exchange_), std::nullopt);
    connection_->post_to_self([connection = connection_, exchange = exchange_, opened, token] {
      connection->adopt_channel(exchange, opened.channel, token, opened.priming);
    });
    channel_ = std::move(opened.channel);
    return true;
  }

  void release() {
    if (!released_.exchange(true)) shared_->release_stream();
  }

  std::shared_ptr<HttpShared> shared_;
  // Strong until close: while the engine works nothing else keeps the connection alive.
  std::shared_ptr<Connection> connection_;
  const std::uint64_t exchange_;
  std::shared_ptr<SseChannel> channel_;
  ChannelOpener opener_;
  std::shared_ptr<SseChannel> fallback_;
  const bool resumable_;
  std::function<void(bool)> on_close_;
  std::mutex mutex_;
  bool started_ = false;
  bool posted_ = false;  // an event (or the reconnect's end) went to the connection by a post
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
  std::shared_ptr<HttpSession> session_entry;  // nullptr when self-contained
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
    session_entry = entry;
    fallback = entry->standalone;
    on_close = [metrics, answers, method_name](bool error) {
      if (answers) metrics->record_rpc(method_name, error);
    };
  }

  mode_ = Mode::waiting;
  awaiting_answer_ = answers;
  // A stream of this POST: its channel, with the priming event that must precede its events.
  ChannelOpener opener;
  if (sse_ok && answers) {
    const unsigned retry_ms = shared_->options.sse_retry_ms;
    const std::size_t store = shared_->options.event_store_size;
    opener = [entry = session_entry, retry_ms, store] {
      OpenedChannel opened;
      opened.channel =
          entry ? entry->open_channel(store) : std::make_shared<SseChannel>("s", false, 1);
      if (opened.channel->resumable()) opened.priming = opened.channel->priming_frame(retry_ms);
      return opened;
    };
  }
  std::shared_ptr<SseChannel> channel;
  if (sse_only && opener) {
    // Only SSE will do: opened now, on the strand, before the engine runs.
    OpenedChannel opened = std::exchange(opener, nullptr)();
    channel = opened.channel;
    adopt_channel(exchange_, channel, channel->attach(make_sink(exchange_), std::nullopt),
                  std::move(opened.priming));
  }
  const bool resumable = !self_contained && priming_allowed_;
  auto stream = std::make_shared<PostStream>(shared_, shared_from_this(), channel,
                                             std::move(opener), fallback, resumable, on_close);
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
