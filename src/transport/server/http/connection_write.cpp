// Writing responses: a whole response with Content-Length, or the queued chunks of an SSE stream,
// one write at a time, each buffer kept alive until its write completes.
#include "transport/server/http/connection.hpp"

#include <algorithm>
#include <charconv>

namespace mcpclass::transport {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

std::string chunk(std::string_view data) {
  char size[16];
  const auto end = std::to_chars(size, size + sizeof size, data.size(), 16).ptr;
  std::string out;
  out.reserve(static_cast<std::size_t>(end - size) + data.size() + 4);
  out.append(size, end).append("\r\n").append(data).append("\r\n");
  return out;
}

void Connection::respond(http::status status, std::string body, std::string_view content_type,
                         Headers headers) {
  // The head written directly (as Beast would write it): a beast::http::response and an
  // ostringstream cost a dozen allocations per answer.
  std::string bytes;
  bytes.reserve(160 + body.size());
  const auto append_number = [&bytes](std::size_t n) {
    char digits[20];
    const auto end = std::to_chars(digits, digits + sizeof digits, n).ptr;
    bytes.append(digits, end);
  };
  bytes.append("HTTP/1.1 ");
  append_number(static_cast<unsigned>(status));
  bytes.append(" ").append(http::obsolete_reason(status)).append("\r\nServer: mcpclass\r\n");
  if (!body.empty()) bytes.append("Content-Type: ").append(content_type).append("\r\n");
  for (const auto& [name, value] : headers) {
    // Framing is this function's to write (a mounted app may pass its upstream's).
    if (beast::iequals(name, "content-length") || beast::iequals(name, "transfer-encoding") ||
        beast::iequals(name, "connection"))
      continue;
    bytes.append(name).append(": ").append(value).append("\r\n");
  }
  if (!keep_alive_ || shared_->stopping) bytes.append("Connection: close\r\n");
  bytes.append("Content-Length: ");
  append_number(body.size());
  bytes.append("\r\n\r\n");
  bytes += body;
  status_ = static_cast<unsigned>(status);
  mode_ = Mode::writing;
  enqueue(std::move(bytes), true);
}

void Connection::enqueue(std::string bytes, bool last) {
  // Counted when the last bytes are queued, not when the kernel took them: a client that has
  // its answer then finds it in /metrics.
  if (last) {
    shared_->metrics->record_http(route_, status_,
                                  std::chrono::duration<double>(Clock::now() - start_).count());
  }
  queue_.push_back({std::move(bytes), last});
  if (!writing_ && !hold_writes_) write_next();
}

void Connection::write_next() {
  if (queue_.empty() || mode_ == Mode::closed) {
    writing_ = false;
    // An open stream with nothing to send waits for events, however long: only writes time out.
    if (mode_ == Mode::streaming) io_->expires_never();
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
  if (ec || mode_ == Mode::closed) {
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

}  // namespace mcpclass::transport
