// Streamable HTTP, POST /mcp: one message or a batch, answered as JSON or as an SSE stream, with
// sessions or stateless.
#include "mcpclass/jsonrpc/message.hpp"
#include "mcpclass/protocol/version.hpp"
#include "mcpclass/server/session.hpp"
#include "mcpclass/util/trace_context.hpp"
#include "transport/server/http/guard.hpp"
#include "transport/server/http/handlers.hpp"
#include "transport/server/http/mcp_common.hpp"
#include "transport/server/http/middleware.hpp"
#include "transport/server/http/rpc_message.hpp"

#include <atomic>
#include <boost/json.hpp>

#include <functional>
#include <mutex>

namespace mcpclass::transport::server {

class Connection;

namespace http = boost::beast::http;
namespace json = boost::json;

/// A POST's SSE channel and the priming event its stream starts with ("" when not resumable).
struct OpenedChannel {
  std::shared_ptr<SseChannel> channel;
  std::string priming;
};
/// Opens the channel of a POST's stream, from any thread, when the stream needs it.
using ChannelOpener = std::function<OpenedChannel()>;

namespace {

// A 2026-07-28 request names its protocol version in params._meta and needs no session.
bool names_version_in_meta(const json::object* message) {
  const json::value* params = message ? message->if_contains("params") : nullptr;
  const json::object* meta = params ? jsonrpc::meta_of(*params) : nullptr;
  const json::value* version = meta ? meta->if_contains(protocol::kMetaProtocolVersion) : nullptr;
  return version && version->is_string();
}

// The POST's answer without SSE: a JSON body, or 202 when there is nothing to say.
void answer(Exchange& exchange, std::shared_ptr<HttpSession> init_entry, bool awaiting_answer,
            std::optional<json::value> final_message) {
  if (!exchange.waiting()) return;
  HeaderList headers;
  if (init_entry) {
    const bool ok = final_message && final_message->is_object() &&
                    final_message->get_object().contains("result");
    if (ok) {
      headers.emplace_back(kSessionHeader, init_entry->id);
    } else {
      exchange.shared->sessions->remove(init_entry->id);
    }
  }
  if (!final_message && awaiting_answer) {
    return exchange.respond(http::status::service_unavailable,
                            rpc_error_body(jsonrpc::kInternalError, kCancelledBeforeAnswer),
                            "application/json", std::move(headers));
  }
  if (!final_message) return exchange.respond(http::status::accepted, {}, {}, std::move(headers));
  if (auto retry_after = overload_retry_after(final_message)) {
    headers.emplace_back("Retry-After", std::move(*retry_after));
    return exchange.respond(http::status::service_unavailable, json::serialize(*final_message),
                            "application/json", std::move(headers));
  }
  exchange.respond(http::status::ok, json::serialize(*final_message), "application/json",
                   std::move(headers));
}

// The engine's view of one POST /mcp: events go to the POST's SSE channel (the exchange switches
// to SSE on the first one), the final message is the JSON body or the stream's last event.
// The channel is opened with the first event (or close_for_reconnect) when the client also takes
// JSON: most calls send none, and a channel per call was a third of the locks a call took.
// `resumable`: the SSE stream starts with a priming event id, so it may be closed early and
// resumed by the client (close_for_reconnect).
class PostStream final : public mcpclass::server::Stream {
 public:
  // `channel`: opened already (the client takes only SSE), or nullptr to open one on the first
  // event when `opener` is set (the client takes SSE and the message asks for an answer).
  // `init_entry`: the session an initialize creates, named in the answer if it succeeds.
  PostStream(std::shared_ptr<Exchange> exchange, std::shared_ptr<SseChannel> channel,
             ChannelOpener opener, std::shared_ptr<SseChannel> fallback, bool resumable,
             std::function<void(bool error)> on_close, std::shared_ptr<HttpSession> init_entry,
             bool awaiting_answer)
      : shared_(exchange->shared),
        connection_(exchange->connection()),
        exchange_(std::move(exchange)),
        channel_(std::move(channel)),
        opener_(std::move(opener)),
        fallback_(std::move(fallback)),
        resumable_(resumable && (channel_ || opener_)),
        on_close_(std::move(on_close)),
        init_entry_(std::move(init_entry)),
        awaiting_answer_(awaiting_answer),
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
    exchange_->post([connection, exchange = exchange_] { exchange->end_stream_for_reconnect(); });
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
      if (connection && !posted && exchange_->on_own_strand()) {
        exchange_->on_frame(channel_->finish_to_caller(std::move(final_message)), true);
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
      exchange_->run_on_self([connection, exchange = exchange_, init_entry = init_entry_,
                              awaiting = awaiting_answer_,
                              final_message = std::move(final_message)]() mutable {
        answer(*exchange, std::move(init_entry), awaiting, std::move(final_message));
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
    const std::uint64_t token = opened.channel->attach(exchange_->make_sink(), std::nullopt);
    exchange_->post([connection = connection_, exchange = exchange_, opened, token] {
      exchange->adopt_channel(opened.channel, token, opened.priming);
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
  const std::shared_ptr<Exchange> exchange_;
  std::shared_ptr<SseChannel> channel_;
  ChannelOpener opener_;
  std::shared_ptr<SseChannel> fallback_;
  const bool resumable_;
  std::function<void(bool)> on_close_;
  const std::shared_ptr<HttpSession> init_entry_;
  const bool awaiting_answer_;  // the POST carried a request: no answer is 503, never 202
  std::mutex mutex_;
  bool started_ = false;
  bool posted_ = false;  // an event (or the reconnect's end) went to the connection by a post
  bool closed_ = false;
  std::atomic<bool> released_{false};
};

class McpPost final : public HttpHandler {
 public:
  void serve(Exchange& exchange, Request& req) override;
};

void McpPost::serve(Exchange& exchange, Request& req) {
  const auto& shared = exchange.shared;
  auto body = read_rpc_body(exchange, req);
  if (!body || !scopes_allow(exchange, *body)) return;
  if (const auto timeout = req[util::kRequestTimeoutHeader]; !timeout.empty()) {
    if (auto problem = apply_request_timeout(*body, timeout))
      return exchange.respond(http::status::bad_request,
                              rpc_error_body(jsonrpc::kInvalidRequest, *problem));
  }
  apply_trace_headers(*body, req[util::kTraceparentHeader], req[util::kTracestateHeader]);
  const json::value& message = *body;
  const json::object* object = message.if_object();
  const json::value* method = object ? object->if_contains("method") : nullptr;
  const bool initialize = method && method->is_string() && method->get_string() == "initialize";
  const bool answers = has_request(message);
  const bool sse_ok = lists_event_stream(req[http::field::accept]);
  // initialize stays JSON: answer() attaches or drops the new session with its answer.
  const bool sse_only =
      sse_ok && !initialize && !accepts(req[http::field::accept], "application/json");
  const std::string method_name(HttpMetrics::method_label(method_of(message)));
  std::string version(req[kVersionHeader]);

  auto metrics = shared->metrics;
  std::shared_ptr<mcpclass::server::Session> session;
  std::shared_ptr<HttpSession> session_entry;  // nullptr when self-contained
  std::shared_ptr<SseChannel> fallback;
  std::shared_ptr<HttpSession> init_entry;  // the session an initialize creates
  std::function<void(bool)> on_close;

  // Served like stateless mode: on a stateless server, and for a request of the stateless era
  // without a session id even where sessions are kept for the handshake eras.
  const bool self_contained =
      shared->options.stateless ||
      (!initialize && req[kSessionHeader].empty() && names_version_in_meta(object));
  if (self_contained) {
    mcpclass::server::SessionOptions options;
    options.require_initialize = initialize;
    if (protocol::is_handshake_version(version)) options.assumed_version = version;
    session = shared->server->create_session(options);
    shared->sessions->add_transient(session);
    exchange.guard.emplace(*shared, nullptr);
    on_close = [metrics, answers, method_name, sessions = shared->sessions,
                weak = std::weak_ptr<mcpclass::server::Session>(session)](bool error) {
      if (answers) metrics->record_rpc(method_name, error);
      if (auto s = weak.lock()) sessions->remove_transient(s);
    };
  } else {
    std::shared_ptr<HttpSession> entry;
    if (initialize) {
      entry = shared->sessions->create(false);
      if (!entry) {
        return exchange.respond(
            http::status::service_unavailable,
            rpc_error_body(jsonrpc::kInternalError, "Service Unavailable: too many sessions"));
      }
      init_entry = entry;
      exchange.sse_headers = {{std::string(kSessionHeader), entry->id}};
    } else {
      entry = find_session(exchange, req[kSessionHeader]);
      if (!entry) return;
      exchange.guard.emplace(*shared, entry, RequestGuard::Adopt{});
      // Deleted (or shut down) after the lookup: the id names no session any more.
      if (entry->session->state() == mcpclass::server::Session::State::closed) {
        return session_not_found(exchange);
      }
    }
    session = entry->session;
    if (!exchange.guard) exchange.guard.emplace(*shared, entry);
    exchange.priming_allowed =
        initialize ? false : session->protocol_version() >= protocol::k2025_11_25;
    session_entry = entry;
    fallback = entry->standalone;
    on_close = [metrics, answers, method_name](bool error) {
      if (answers) metrics->record_rpc(method_name, error);
    };
  }

  // A stream of this POST: its channel, with the priming event that must precede its events.
  ChannelOpener opener;
  if (sse_ok && answers) {
    const unsigned retry_ms = shared->options.sse_retry_ms;
    const std::size_t store = shared->options.event_store_size;
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
    exchange.adopt_channel(channel, channel->attach(exchange.make_sink(), std::nullopt),
                           std::move(opened.priming));
  }
  const bool resumable = !self_contained && exchange.priming_allowed;
  auto stream =
      std::make_shared<PostStream>(exchange.shared_from_this(), channel, std::move(opener),
                                   fallback, resumable, on_close, std::move(init_entry), answers);
  hand_over(*session, std::move(*body), stream);
}

}  // namespace

std::shared_ptr<HttpHandler> mcp_post_handler() {
  return std::make_shared<McpPost>();
}

}  // namespace mcpclass::transport::server
