// Watching a client while its answer is pending or streaming: a read that notices it leaving.
// Behind a mounted app's answer, what the read gets is a pipelined request, kept in the read
// buffer (up to its bound, then reads stop and a parked timer holds the connection) and read once
// the answer is written; behind a GET stream, which ends its connection, it is dropped.
#include "transport/server/http/connection.hpp"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstdint>
#include <limits>

namespace mcpclass::transport::server {

namespace net = boost::asio;
namespace beast = boost::beast;

void Connection::watch_client(bool keep_bytes) {
  if (keep_bytes) return watch_pipelining();
  watch_disconnect();
}

void Connection::watch_pipelining() {
  watching_ = true;
  io_->expires_never();
  const auto room = read_room(4096);
  if (room.size() == 0) return park_reading();
  io_->read_some(room, [self = shared_from_this()](beast::error_code ec, std::size_t n) {
    self->watching_ = false;
    // Bytes are the client's next (pipelined) request: kept for do_read.
    self->buffer_.commit(n);
    if (self->resume_reading_) {
      self->resume_reading_ = false;
      return self->next_request();
    }
    if (ec) return self->disconnect();
    // This pending read is what holds the connection while the app works: without it the
    // connection was destroyed, cancelling the app's answer to the first request (issue 28).
    self->watch_pipelining();
  });
}

void Connection::park_reading() {
  if (!parked_) parked_.emplace(io_->executor());
  parked_->expires_at(net::steady_timer::time_point::max());
  parked_->async_wait([self = shared_from_this()](beast::error_code) {
    self->watching_ = false;
    if (!self->resume_reading_) return;  // disconnect() cancelled it
    self->resume_reading_ = false;
    self->next_request();
  });
}

void Connection::stop_watching() {
  resume_reading_ = true;
  io_->cancel();
  if (parked_) parked_->cancel();
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

void Connection::bound_unacknowledged() {
  const auto ms = static_cast<unsigned>(std::min<std::int64_t>(
      shared_->options.write_timeout.count(), std::numeric_limits<unsigned>::max()));
  ::setsockopt(io_->native_handle(), IPPROTO_TCP, TCP_USER_TIMEOUT, &ms, sizeof ms);
}

}  // namespace mcpclass::transport::server
