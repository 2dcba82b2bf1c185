// SSE on a connection: GET /mcp (the standalone stream, or a POST's stream resumed with
// Last-Event-ID), the SSE response head, frames handed over by the channels, and noticing that the
// reader of a GET stream went away.
#include "transport/server/http/connection.hpp"

#include "mcpclass/jsonrpc/message.hpp"
#include "mcpclass/protocol/version.hpp"
#include "mcpclass/server/session.hpp"
#include "transport/server/http/guard.hpp"
#include "transport/server/http/rpc_message.hpp"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstdint>
#include <limits>

namespace mcpclass::transport {

namespace beast = boost::beast;
namespace http = beast::http;

void Connection::on_frame(std::uint64_t exchange, std::string frame, bool end) {
  // The head, the priming event, the frame and the last chunk leave in one write.
  hold_writes_ = true;
  queue_frame(exchange, std::move(frame), end);
  hold_writes_ = false;
  if (!writing_ && !queue_.empty()) write_next();
}

void Connection::queue_frame(std::uint64_t exchange, std::string frame, bool end) {
  if (exchange != exchange_) return;
  if (mode_ == Mode::waiting) {
    // An end with nothing before it (a cancelled call on a POST that takes only SSE, or a stream
    // a GET took over by resuming it) still ends this POST's stream: its client would wait for
    // ever. (A POST that also takes JSON has no channel before its first event.)
    if (frame.empty() && !end) return;
    start_sse(priming_allowed_);
  }
  if (mode_ != Mode::streaming) return;
  if (!frame.empty()) {
    // The reader is too slow when bytes are still queued and this frame would pass the cap; a
    // single large frame to a reader that keeps up is sent.
    if (queued_bytes_ > 0 && queued_bytes_ + frame.size() > kMaxQueuedBytes) return disconnect();
    queued_bytes_ += frame.size();
    enqueue(chunk(frame), false);
  }
  if (end) {
    mode_ = Mode::writing;
    enqueue("0\r\n\r\n", true);
  }
}

void Connection::end_stream_for_reconnect(std::uint64_t exchange) {
  if (exchange != exchange_) return;
  if (mode_ == Mode::waiting) start_sse(priming_allowed_);
  if (mode_ != Mode::streaming) return;
  // Frames the sink already posted arrive after this and are dropped: the channel keeps them.
  if (channel_ && sink_token_ != 0) channel_->detach(sink_token_);
  sink_token_ = 0;
  mode_ = Mode::writing;
  enqueue("0\r\n\r\n", true);
}

void Connection::adopt_channel(std::uint64_t exchange, std::shared_ptr<SseChannel> channel,
                               std::uint64_t token, std::string priming) {
  if (exchange != exchange_ || mode_ != Mode::waiting) return channel->detach(token);
  channel_ = std::move(channel);
  sink_token_ = token;
  priming_ = std::move(priming);
}

SseChannel::Sink Connection::make_sink(std::uint64_t exchange) {
  // Strong: between writes nothing else keeps the connection alive. The channel drops the sink
  // when it finishes or the connection detaches it.
  return [self = shared_from_this(), gate = shared_->gate, executor = io_->executor(), exchange](
             std::string frame, bool end) {
    gate->post(executor, [self, exchange, frame = std::move(frame), end]() mutable {
      self->on_frame(exchange, std::move(frame), end);
    });
  };
}

void Connection::get_mcp(const Request& req) {
  if (!lists_event_stream(req[http::field::accept])) {
    return respond(http::status::not_acceptable,
                   rpc_error_body(jsonrpc::kInvalidRequest,
                                  "Not Acceptable: Accept must include text/event-stream"));
  }
  auto entry = find_session(req[kSessionHeader]);
  if (!entry) return;
  // Busy until the stream is attached: an attached session is not idle, so never evicted.
  RequestGuard busy(*shared_, entry, RequestGuard::Adopt{});
  if (entry->session->state() == server::Session::State::closed) {
    return session_not_found();
  }
  std::shared_ptr<SseChannel> channel = entry->standalone;
  std::optional<std::uint64_t> after;
  if (const std::string_view last = req["Last-Event-ID"]; !last.empty()) {
    auto parsed = parse_event_id(last);
    bool forgotten = false;
    channel = parsed ? entry->find_channel(parsed->first, forgotten) : nullptr;
    if (forgotten) return replay_gone();
    // Not 404: to a client that means its session is gone.
    if (!channel) {
      return respond(http::status::bad_request,
                     rpc_error_body(jsonrpc::kInvalidRequest,
                                    "Bad Request: this session has no stream with that "
                                    "Last-Event-ID"));
    }
    after = parsed->second;
  }
  if (!open_stream_slot()) return;
  guard_.reset();
  // Attached before the head is written: the sink posts to this strand, so its frames follow it.
  const std::uint64_t token = channel->attach(make_sink(), after);
  if (token == SseChannel::kForgotten) {
    shared_->streams.close(peer_);
    stream_counted_ = get_stream_ = false;
    return replay_gone();
  }
  channel_ = channel;
  sink_token_ = token;
  priming_ = channel->priming_frame(shared_->options.sse_retry_ms);
  start_sse(entry->session->protocol_version() >= protocol::k2025_11_25);
  bound_unacknowledged();
  watch_disconnect();
  schedule_heartbeat();
}

// The events asked for existed but were dropped to stay within a replay budget: resuming would
// leave a gap the client cannot see, so it is told instead.
void Connection::replay_gone() {
  respond(http::status::gone,
          rpc_error_body(jsonrpc::kInvalidRequest,
                         "Gone: the events after that Last-Event-ID were dropped from the replay "
                         "store (server.http.event_store_bytes, event_store_session_bytes, "
                         "event_store_total_bytes)"));
}

bool Connection::open_stream_slot() {
  if (!shared_->streams.try_open(peer_)) {
    respond(
        http::status::service_unavailable,
        rpc_error_body(jsonrpc::kInternalError,
                       "Service Unavailable: too many SSE streams (in all, or from this client)"));
    return false;
  }
  stream_counted_ = true;
  get_stream_ = true;
  keep_alive_ = false;  // a GET stream ends with its connection
  return true;
}

// Writes the SSE response head (and the priming event of resumable streams).
void Connection::start_sse(bool priming) {
  std::string head = begin_head(200, "text/event-stream");
  head.append("Cache-Control: no-cache\r\n");
  if (init_entry_) head.append(kSessionHeader).append(": ").append(init_entry_->id).append("\r\n");
  end_head(head, keep_alive_, std::nullopt);
  status_ = 200;
  mode_ = Mode::streaming;
  enqueue(std::move(head), false);
  if (priming && !priming_.empty()) enqueue(chunk(priming_), false);
}

// A peer host that vanished never acknowledges the heartbeats: the kernel gives up on the
// connection once sent data stays unacknowledged for write_timeout (TCP_USER_TIMEOUT), instead of
// retransmitting for a quarter of an hour.
void Connection::bound_unacknowledged() {
  const auto ms = static_cast<unsigned>(std::min<std::int64_t>(
      shared_->options.write_timeout.count(), std::numeric_limits<unsigned>::max()));
  ::setsockopt(io_->native_handle(), IPPROTO_TCP, TCP_USER_TIMEOUT, &ms, sizeof ms);
}

// GET streams only write; a read that fails tells us the client went away. The read has no
// deadline: a stream may be quiet for hours. (The stream's timers only change for operations not
// in flight, so this leaves a write's write_timeout alone.)
void Connection::watch_disconnect() {
  io_->expires_never();
  // A GET stream ends its connection: what the client sends meanwhile (or pipelined before it)
  // is dropped.
  buffer_.clear();
  io_->read_some(read_room(1024), [self = shared_from_this()](beast::error_code ec, std::size_t) {
    if (ec) return self->disconnect();
    self->watch_disconnect();
  });
}

// An idle GET stream gets an SSE comment now and then: proxies keep it open, and a peer that
// vanished or stopped reading is found by the write timeout instead of pinning the stream.
void Connection::schedule_heartbeat() {
  const auto period = shared_->options.sse_heartbeat;
  if (period.count() <= 0 || mode_ != Mode::streaming) return;
  if (!heartbeat_) heartbeat_.emplace(io_->executor());
  heartbeat_->expires_after(period);
  heartbeat_->async_wait([weak = weak_from_this()](beast::error_code ec) {
    auto self = weak.lock();
    if (ec || !self || self->mode_ != Mode::streaming) return;
    if (self->queue_.empty()) self->enqueue(chunk(": keep-alive\n\n"), false);
    self->schedule_heartbeat();
  });
}

}  // namespace mcpclass::transport
