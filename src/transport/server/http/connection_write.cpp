// Writing: the queued bytes of the exchange's response, one write at a time (everything queued
// goes in one gathered write), each buffer kept alive until its write completes.
#include "transport/server/http/connection.hpp"

#include "transport/server/http/exchange.hpp"

#include <algorithm>

namespace mcpclass::transport::server {

namespace net = boost::asio;
namespace beast = boost::beast;

void Connection::write(const Exchange& exchange, std::string bytes, bool last) {
  if (&exchange != exchange_.get() || closed_) return;
  queue_.push_back({std::move(bytes), last});
  if (!writing_ && !hold_writes_) write_next();
}

bool Connection::take_queue_room(std::size_t n) {
  if (queued_bytes_ > 0 && queued_bytes_ + n > kMaxQueuedBytes) return false;
  queued_bytes_ += n;
  return true;
}

void Connection::write_next() {
  if (queue_.empty() || closed_) {
    writing_ = false;
    // An open stream with nothing to send waits for events, however long: only writes time out.
    if (exchange_ && exchange_->streaming()) io_->expires_never();
    return;
  }
  writing_ = true;
  // Everything queued goes in one write: an SSE answer's head, events and last chunk are one
  // send, not one each.
  constexpr std::size_t kMaxGather = 64;
  writing_count_ = std::min(queue_.size(), kMaxGather);
  write_buffers_.clear();
  for (std::size_t i = 0; i < writing_count_; ++i)
    write_buffers_.push_back(net::buffer(queue_[i].bytes));
  // Each write, streams included, must make progress within write_timeout: a peer that stopped
  // reading (or vanished) cannot pin a stream, its buffers and its session.
  io_->expires_after(shared_->options.write_timeout);
  io_->write(write_buffers_, beast::bind_front_handler(&Connection::on_write, shared_from_this()));
}

void Connection::on_write(beast::error_code ec, std::size_t n) {
  if (ec || closed_) {
    // The buffers this write used are released only now that the write is over.
    writing_ = false;
    writing_count_ = 0;
    queue_.clear();
    return disconnect();
  }
  queued_bytes_ = queued_bytes_ > n ? queued_bytes_ - n : 0;
  bool last = false;
  for (; writing_count_ > 0; --writing_count_) {
    last = last || queue_.front().last;
    queue_.pop_front();
  }
  if (last) {
    writing_ = false;
    return on_response_complete();
  }
  write_next();
}

}  // namespace mcpclass::transport::server
