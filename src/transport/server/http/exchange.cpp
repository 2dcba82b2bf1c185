// The exchange's state and its responder: whole responses, chunked bodies, SSE streams.
#include "transport/server/http/exchange.hpp"

#include "mcpclass/jsonrpc/message.hpp"
#include "transport/server/http/connection.hpp"
#include "transport/server/http/rpc_message.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/strand.hpp>

namespace mcpclass::transport::server {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

Exchange::Exchange(std::weak_ptr<Connection> connection, std::shared_ptr<HttpShared> shared_state,
                   net::any_io_executor executor, net::ip::address peer_address)
    : shared(std::move(shared_state)),
      peer(peer_address),
      connection_(std::move(connection)),
      executor_(std::move(executor)) {}

Exchange::~Exchange() {
  // A connection destroyed without releasing it (the engine dropped the last reference).
  release();
}

bool Exchange::on_own_strand() const {
  const auto* strand = executor_.target<net::strand<net::io_context::executor_type>>();
  return strand && strand->running_in_this_thread();
}

void Exchange::release() {
  state_ = State::ended;
  // Destroyed now, while the connection (which keeps the io_context's services) still lives.
  heartbeat_.reset();
  if (channel_ && sink_token_ != 0) channel_->detach(sink_token_);
  channel_.reset();
  sink_token_ = 0;
  priming_.clear();
  return_stream_slot();
  guard.reset();
  reading.reset();
  for (auto& f : std::exchange(on_release_, {})) f();
}

void Exchange::write(std::string bytes, bool last) {
  // Counted when the last bytes are queued, not when the kernel took them: a client that has
  // its answer then finds it in /metrics.
  if (last) {
    shared->metrics->record_http(route, status,
                                 std::chrono::duration<double>(Clock::now() - start).count());
  }
  if (auto c = connection()) c->write(*this, std::move(bytes), last);
}

void Exchange::respond(http::status code, std::string body, std::string_view content_type,
                       HeaderList headers) {
  if (state_ == State::ended) return;
  std::string bytes = begin_head(static_cast<unsigned>(code),
                                 body.empty() ? std::string_view() : content_type, body.size());
  append_fields(bytes, headers);
  end_head(bytes, keep_alive && !shared->stopping, body.size());
  bytes += body;
  status = static_cast<unsigned>(code);
  state_ = State::writing;
  write(std::move(bytes), true);
}

void Exchange::method_not_allowed(std::string allow) {
  respond(http::status::method_not_allowed,
          rpc_error_body(jsonrpc::kInvalidRequest, "Method Not Allowed"), "application/json",
          {{"Allow", std::move(allow)}});
}

void Exchange::begin_chunked(unsigned code, const HeaderList& headers) {
  if (state_ != State::waiting) return;
  std::string head = begin_head(code, {});
  append_fields(head, headers);
  end_head(head, keep_alive && !shared->stopping, std::nullopt);
  status = code;
  state_ = State::streaming;
  write(std::move(head), false);
}

void Exchange::write_chunk(std::string_view data) {
  if (state_ != State::streaming) return;
  auto c = connection();
  if (!c) return;
  if (!c->take_queue_room(data.size())) return c->disconnect();
  c->write(*this, chunk(data), false);
}

void Exchange::end_chunked(bool complete) {
  if (state_ != State::streaming) return;
  if (!complete) keep_alive = false;  // no last chunk: the client sees a truncated body
  state_ = State::writing;
  write(complete ? "0\r\n\r\n" : "", true);
}

void Exchange::start_sse(bool priming, const HeaderList& headers) {
  if (state_ != State::waiting) return;
  std::string head = begin_head(200, "text/event-stream");
  head.append("Cache-Control: no-cache\r\n");
  append_fields(head, headers);
  end_head(head, keep_alive, std::nullopt);
  status = 200;
  state_ = State::streaming;
  write(std::move(head), false);
  if (priming && !priming_.empty()) write(chunk(priming_), false);
}

void Exchange::on_frame(std::string frame, bool end) {
  auto c = connection();
  if (!c) return;
  // The head, the priming event, the frame and the last chunk leave in one write.
  c->write_together([&] { queue_frame(std::move(frame), end); });
}

void Exchange::queue_frame(std::string frame, bool end) {
  if (state_ == State::waiting) {
    // An end with nothing before it (a cancelled call on a POST that takes only SSE, or a stream
    // a GET took over by resuming it) still ends this POST's stream: its client would wait for
    // ever. (A POST that also takes JSON has no channel before its first event.)
    if (frame.empty() && !end) return;
    start_sse(priming_allowed, sse_headers);
  }
  if (state_ != State::streaming) return;
  if (!frame.empty()) write_chunk(frame);
  if (end && state_ == State::streaming) {
    state_ = State::writing;
    write("0\r\n\r\n", true);
  }
}

void Exchange::end_stream_for_reconnect() {
  if (state_ == State::waiting) start_sse(priming_allowed, sse_headers);
  if (state_ != State::streaming) return;
  // Frames the sink already posted arrive after this and are dropped: the channel keeps them.
  if (channel_ && sink_token_ != 0) channel_->detach(sink_token_);
  sink_token_ = 0;
  state_ = State::writing;
  write("0\r\n\r\n", true);
}

void Exchange::adopt_channel(std::shared_ptr<SseChannel> channel, std::uint64_t token,
                             std::string priming) {
  if (state_ != State::waiting) return channel->detach(token);
  channel_ = std::move(channel);
  sink_token_ = token;
  priming_ = std::move(priming);
}

SseChannel::Sink Exchange::make_sink() {
  // Strong: between writes nothing else keeps the connection alive. The channel drops the sink
  // when it finishes or the exchange detaches it.
  return [self = shared_from_this(), connection = connection(), gate = shared->gate,
          executor = executor_](std::string frame, bool end) {
    gate->post(executor, [self, connection, frame = std::move(frame), end]() mutable {
      self->on_frame(std::move(frame), end);
    });
  };
}

void Exchange::keep_stream_alive() {
  const auto period = shared->options.sse_heartbeat;
  if (period.count() <= 0 || state_ != State::streaming) return;
  if (!heartbeat_) heartbeat_.emplace(executor_);
  heartbeat_->expires_after(period);
  heartbeat_->async_wait([weak = weak_from_this()](beast::error_code ec) {
    auto self = weak.lock();
    if (ec || !self || self->state_ != State::streaming) return;
    auto c = self->connection();
    if (!c) return;
    if (c->write_idle()) self->write(chunk(": keep-alive\n\n"), false);
    self->keep_stream_alive();
  });
}

bool Exchange::take_stream_slot() {
  if (!shared->streams.try_open(peer)) {
    respond(
        http::status::service_unavailable,
        rpc_error_body(jsonrpc::kInternalError,
                       "Service Unavailable: too many SSE streams (in all, or from this client)"));
    return false;
  }
  stream_slot_ = true;
  ends_connection = true;
  keep_alive = false;  // a GET stream ends with its connection
  return true;
}

void Exchange::return_stream_slot() {
  if (!stream_slot_) return;
  stream_slot_ = false;
  ends_connection = false;
  shared->streams.close(peer);
}

void Exchange::watch_client(bool keep_bytes) {
  if (auto c = connection()) c->watch_client(keep_bytes);
}

void Exchange::bound_unacknowledged() {
  if (auto c = connection()) c->bound_unacknowledged();
}

void Exchange::disconnect() {
  if (auto c = connection()) c->disconnect();
}

}  // namespace mcpclass::transport::server
