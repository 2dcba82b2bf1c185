// The connection's lifecycle: reading requests (with the read and idle timeouts and the header and
// body limits), finishing an exchange, and closing (gracefully or at once).
#include "transport/server/http/connection.hpp"

#include "mcpclass/jsonrpc/message.hpp"
#include "transport/server/http/app_response.hpp"
#include "transport/server/http/rpc_message.hpp"

#include <boost/asio/dispatch.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/strand.hpp>

#include <algorithm>

#include <fmt/format.h>

namespace mcpclass::transport {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;

Connection::Connection(std::shared_ptr<void> io_owner, std::unique_ptr<ConnectionIo> io,
                       std::shared_ptr<HttpShared> shared, boost::asio::ip::address peer)
    : io_owner_(std::move(io_owner)), io_(std::move(io)), shared_(std::move(shared)), peer_(peer) {
  ++shared_->connections;
  // Beast's parser keeps a chunk-size line and a trailer section in this buffer until they end:
  // unbounded, an endless chunk extension grew it by a gigabyte in seconds (issue 28).
  buffer_.max_size(shared_->options.max_header_bytes);
}

Connection::~Connection() {
  if (app_response_) app_response_->cancel();
  --shared_->connections;
  if (stream_counted_) shared_->streams.close(peer_);
  release_reading();
}

void Connection::start() {
  net::dispatch(io_->executor(), [self = shared_from_this()] {
    // A failed handshake (a plain-HTTP client, a bad certificate, a timeout) only ends this
    // connection.
    self->io_->handshake(self->shared_->options.read_timeout, [self](beast::error_code ec) {
      if (ec) return self->disconnect();
      self->do_read();
    });
  });
}

bool Connection::on_own_strand() const {
  const auto executor = io_->executor();
  const auto* strand = executor.target<net::strand<net::io_context::executor_type>>();
  return strand && strand->running_in_this_thread();
}

void Connection::do_read() {
  if (mode_ == Mode::closed) return;
  mode_ = Mode::reading;
  parser_.emplace();
  parser_->body_limit(shared_->options.max_body_bytes);
  parser_->header_limit(static_cast<std::uint32_t>(shared_->options.max_header_bytes));
  io_->expires_after(first_request_ ? shared_->options.read_timeout
                                    : shared_->options.idle_timeout);
  io_->read_header(buffer_, *parser_,
                   beast::bind_front_handler(&Connection::on_header, shared_from_this()));
}

void Connection::on_header(beast::error_code ec, std::size_t) {
  if (ec) return on_read_error(ec);
  // From its headers on, a request counts as in flight: a drain that starts while its body is
  // still arriving waits for it and answers it instead of resetting the connection.
  shared_->begin_request();
  reading_counted_ = true;
  first_request_ = false;
  start_ = Clock::now();
  ++exchange_;
  route_ = "other";
  // A request refused before its body arrived ends its connection: the body is never read
  // (issue 28: 100 unauthenticated 4 MiB bodies held 400 MiB until read_timeout).
  keep_alive_ = parser_->get().keep_alive() && parser_->is_done();
  if (!admit(parser_->get())) return release_reading();
  io_->expires_after(shared_->options.read_timeout);
  io_->read(buffer_, *parser_, beast::bind_front_handler(&Connection::on_read, shared_from_this()));
}

void Connection::on_read(beast::error_code ec, std::size_t) {
  if (ec) {
    release_reading();
    return on_read_error(ec);
  }
  io_->expires_never();
  handle(parser_->release());
  // After handle(): a request it keeps running holds its own count, so the drain never sees
  // zero in between.
  release_reading();
}

net::mutable_buffer Connection::read_room(std::size_t n) {
  return buffer_.prepare(std::min(n, buffer_.max_size() - buffer_.size()));
}

void Connection::release_reading() {
  if (!reading_counted_) return;
  reading_counted_ = false;
  shared_->end_request();
}

void Connection::on_read_error(beast::error_code ec) {
  if (mode_ == Mode::closed) return;
  keep_alive_ = false;
  route_ = "other";
  if (ec == http::error::body_limit) {
    const std::string message = fmt::format("Payload Too Large: the body exceeds {} bytes",
                                            shared_->options.max_body_bytes);
    if (const auto& app = shared_->options.app) {
      const std::string_view target = parser_->get().target();
      if (app->handles(target.substr(0, target.find('?')))) {
        if (auto body = app->too_large_body(message); !body.empty())
          return respond(http::status::payload_too_large, std::move(body));
      }
    }
    return respond(http::status::payload_too_large,
                   rpc_error_body(jsonrpc::kInvalidRequest, message));
  }
  if (ec == http::error::header_limit) {
    return respond(http::status::request_header_fields_too_large,
                   rpc_error_body(jsonrpc::kInvalidRequest, "Request Header Fields Too Large"));
  }
  if (ec == http::error::buffer_overflow) {
    return respond(
        http::status::bad_request,
        rpc_error_body(jsonrpc::kInvalidRequest,
                       fmt::format("Bad Request: a chunk-size line (with its extensions) "
                                   "or the trailer section exceeds {} bytes",
                                   shared_->options.max_header_bytes)));
  }
  if (ec == http::error::end_of_stream || ec == beast::error::timeout || ec == net::error::eof ||
      ec == net::error::connection_reset || ec == net::error::operation_aborted ||
      ec == http::error::partial_message) {
    return disconnect();
  }
  respond(http::status::bad_request,
          rpc_error_body(jsonrpc::kInvalidRequest, "Bad Request: " + ec.message()));
}

void Connection::on_response_complete() {
  release_exchange();
  // The read that watched for the client leaving must end before the next request is read.
  if (watching_) return stop_watching();
  next_request();
}

void Connection::next_request() {
  if (mode_ == Mode::closed) return;
  if (get_stream_) return disconnect();
  if (!keep_alive_ || shared_->stopping) return graceful_close();
  do_read();
}

// Lets go of what the finished exchange held.
void Connection::release_exchange() {
  if (channel_ && sink_token_ != 0) channel_->detach(sink_token_);
  channel_.reset();
  sink_token_ = 0;
  init_entry_.reset();
  if (app_response_) std::exchange(app_response_, nullptr)->cancel();
  guard_.reset();
  queued_bytes_ = 0;
  priming_allowed_ = false;
  priming_.clear();
  if (legacy_entry_) {
    shared_->sessions->remove(legacy_entry_->id);
    legacy_entry_.reset();
  }
}

// Ends our side (FIN, after close_notify on TLS), then reads (and drops) what the client still
// sends, so it sees our answer rather than a reset; gives up after a second.
void Connection::graceful_close() {
  mode_ = Mode::closed;
  io_->expires_after(std::chrono::seconds(1));
  io_->shutdown_send([self = shared_from_this()](beast::error_code ec) {
    if (ec) return self->io_->close();
    self->drain();
  });
}

void Connection::drain() {
  buffer_.clear();
  io_->read_some(read_room(4096), [self = shared_from_this()](beast::error_code ec, std::size_t) {
    if (ec) return self->io_->close();
    self->drain();
  });
}

void Connection::disconnect() {
  if (mode_ == Mode::closed) return;
  mode_ = Mode::closed;
  if (heartbeat_) heartbeat_->cancel();
  if (parked_) parked_->cancel();
  release_exchange();
  // A write in progress still reads queue_'s first items: keep those buffers until on_write.
  if (writing_ && !queue_.empty()) {
    queue_.erase(queue_.begin() + static_cast<std::ptrdiff_t>(writing_count_), queue_.end());
  } else {
    queue_.clear();
  }
  io_->close();
}

void serve_connection(tcp::socket socket, std::shared_ptr<HttpShared> shared,
                      std::shared_ptr<void> io_owner) {
  // An SSE answer is several small writes (head, events, last chunk); with Nagle's algorithm the
  // second waits for the client's delayed ACK, ~40 ms per answer.
  boost::system::error_code ignored;
  socket.set_option(tcp::no_delay(true), ignored);
  if (shared->options.send_buffer_bytes > 0) {
    socket.set_option(
        net::socket_base::send_buffer_size(static_cast<int>(shared->options.send_buffer_bytes)),
        ignored);
  }
  const auto peer = socket.remote_endpoint(ignored).address();
  auto io =
      shared->tls ? make_tls_io(std::move(socket), *shared->tls) : make_plain_io(std::move(socket));
  std::make_shared<Connection>(std::move(io_owner), std::move(io), std::move(shared), peer)
      ->start();
}

}  // namespace mcpclass::transport
