// Writing responses: a whole response with Content-Length, or the queued chunks of an SSE stream,
// one write at a time, each buffer kept alive until its write completes.
#include "transport/server/http/connection.hpp"

#include <algorithm>
#include <charconv>

namespace mcpclass::transport {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

namespace {

void append_number(std::string& out, std::size_t n, int base = 10) {
  char digits[20];
  out.append(digits, std::to_chars(digits, digits + sizeof digits, n, base).ptr);
}

}  // namespace

std::string chunk(std::string_view data) {
  std::string out;
  out.reserve(data.size() + 24);
  append_number(out, data.size(), 16);
  out.append("\r\n").append(data).append("\r\n");
  return out;
}

// Heads are written directly (as Beast would write them): a beast::http::response and an
// ostringstream cost a dozen allocations per answer.
std::string Connection::begin_head(unsigned status, std::string_view content_type,
                                   std::size_t reserve) {
  std::string out;
  out.reserve(160 + reserve);
  out.append("HTTP/1.1 ");
  append_number(out, status);
  out.append(" ")
      .append(http::obsolete_reason(static_cast<http::status>(status)))
      .append("\r\nServer: mcpclass\r\n");
  if (!content_type.empty()) out.append("Content-Type: ").append(content_type).append("\r\n");
  return out;
}

void Connection::append_fields(std::string& out, const Headers& headers) {
  for (const auto& [name, value] : headers) {
    // Framing is end_head()'s to write (a mounted app may pass its upstream's).
    if (beast::iequals(name, "content-length") || beast::iequals(name, "transfer-encoding") ||
        beast::iequals(name, "connection"))
      continue;
    out.append(name).append(": ").append(value).append("\r\n");
  }
}

void Connection::end_head(std::string& out, bool keep_alive,
                          std::optional<std::size_t> content_length) {
  if (!keep_alive) out.append("Connection: close\r\n");
  if (content_length) {
    out.append("Content-Length: ");
    append_number(out, *content_length);
    out.append("\r\n\r\n");
  } else {
    out.append("Transfer-Encoding: chunked\r\n\r\n");
  }
}

void Connection::respond(http::status status, std::string body, std::string_view content_type,
                         Headers headers) {
  std::string bytes = begin_head(static_cast<unsigned>(status),
                                 body.empty() ? std::string_view() : content_type, body.size());
  append_fields(bytes, headers);
  end_head(bytes, keep_alive_ && !shared_->stopping, body.size());
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
