// The connection's lifecycle: reading requests (with the read and idle timeouts and the header and
// body limits), opening and releasing the exchange of each, and closing (gracefully or at once).
#include "transport/server/http/connection.hpp"

#include "transport/server/http/exchange.hpp"
#include "transport/server/http/front.hpp"

#include <boost/asio/dispatch.hpp>

#include <algorithm>

namespace mcpclass::transport::server {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;

Connection::Connection(std::shared_ptr<boost::asio::io_context> io_owner,
                       std::unique_ptr<ConnectionIo> io, std::shared_ptr<HttpShared> shared,
                       boost::asio::ip::address peer)
    : io_owner_(std::move(io_owner)), io_(std::move(io)), shared_(std::move(shared)), peer_(peer) {
  ++shared_->connections;
  // Beast's parser keeps a chunk-size line and a trailer section in this buffer until they end:
  // unbounded, an endless chunk extension grew it by a gigabyte in seconds (issue 28).
  buffer_.max_size(shared_->options.max_header_bytes);
}

Connection::~Connection() {
  --shared_->connections;
  if (exchange_) exchange_->release();
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

void Connection::do_read() {
  if (closed_) return;
  parser_.emplace();
  parser_->body_limit(shared_->options.max_body_bytes);
  parser_->header_limit(static_cast<std::uint32_t>(shared_->options.max_header_bytes));
  io_->expires_after(first_request_ ? shared_->options.read_timeout
                                    : shared_->options.idle_timeout);
  io_->read_header(buffer_, *parser_,
                   beast::bind_front_handler(&Connection::on_header, shared_from_this()));
}

std::shared_ptr<Exchange> Connection::open_exchange() {
  exchange_ = std::make_shared<Exchange>(weak_from_this(), shared_, io_->executor(), peer_);
  return exchange_;
}

void Connection::on_header(beast::error_code ec, std::size_t) {
  if (ec) return on_read_error(ec);
  first_request_ = false;
  auto exchange = open_exchange();
  // From its headers on, a request counts as in flight: a drain that starts while its body is
  // still arriving waits for it and answers it instead of resetting the connection.
  exchange->reading.emplace(*shared_, nullptr);
  // A request refused before its body arrived ends its connection: the body is never read
  // (issue 28: 100 unauthenticated 4 MiB bodies held 400 MiB until read_timeout).
  exchange->keep_alive = parser_->get().keep_alive() && parser_->is_done();
  if (!shared_->front->admit(*exchange, parser_->get())) return exchange->reading.reset();
  io_->expires_after(shared_->options.read_timeout);
  io_->read(buffer_, *parser_, beast::bind_front_handler(&Connection::on_read, shared_from_this()));
}

void Connection::on_read(beast::error_code ec, std::size_t) {
  if (ec) {
    if (exchange_) exchange_->reading.reset();
    return on_read_error(ec);
  }
  io_->expires_never();
  auto exchange = exchange_;
  shared_->front->serve(*exchange, parser_->release());
  // After serve(): a request it keeps running holds its own count, so the drain never sees
  // zero in between.
  exchange->reading.reset();
}

net::mutable_buffer Connection::read_room(std::size_t n) {
  return buffer_.prepare(std::min(n, buffer_.max_size() - buffer_.size()));
}

void Connection::on_read_error(beast::error_code ec) {
  if (closed_) return;
  if (ec == http::error::end_of_stream || ec == beast::error::timeout || ec == net::error::eof ||
      ec == net::error::connection_reset || ec == net::error::operation_aborted ||
      ec == http::error::partial_message) {
    return disconnect();
  }
  auto exchange = exchange_ ? exchange_ : open_exchange();
  exchange->keep_alive = false;
  exchange->route = "other";
  shared_->front->refuse_unreadable(*exchange, parser_->get(), ec);
}

void Connection::on_response_complete() {
  after_ = !exchange_                   ? After::close
           : exchange_->ends_connection ? After::disconnect
           : exchange_->keep_alive      ? After::read
                                        : After::close;
  release_exchange();
  // The read that watched for the client leaving must end before the next request is read.
  if (watching_) return stop_watching();
  next_request();
}

void Connection::next_request() {
  if (closed_) return;
  if (after_ == After::disconnect) return disconnect();
  if (after_ == After::close || shared_->stopping) return graceful_close();
  do_read();
}

void Connection::release_exchange() {
  queued_bytes_ = 0;
  if (auto exchange = std::exchange(exchange_, nullptr)) exchange->release();
}

// Ends our side (FIN, after close_notify on TLS), then reads (and drops) what the client still
// sends, so it sees our answer rather than a reset; gives up after a second.
void Connection::graceful_close() {
  closed_ = true;
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
  if (closed_) return;
  closed_ = true;
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
                      std::shared_ptr<boost::asio::io_context> io_owner) {
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

}  // namespace mcpclass::transport::server
