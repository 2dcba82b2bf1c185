// Writing responses: a whole response with Content-Length, or the queued chunks of an SSE stream,
// one write at a time, each buffer kept alive until its write completes.
#include "transport/server/http/connection.hpp"

#include <fmt/format.h>

#include <sstream>

namespace mcpclass::transport {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

std::string chunk(std::string_view data) {
  std::string out = fmt::format("{:x}\r\n", data.size());
  out.append(data).append("\r\n");
  return out;
}

void Connection::respond(http::status status, std::string body, std::string_view content_type,
                         Headers headers) {
  http::response<http::empty_body> res{status, 11};
  res.set(http::field::server, "mcpclass");
  if (!body.empty()) res.set(http::field::content_type, content_type);
  for (auto& [name, value] : headers) res.set(name, value);
  res.keep_alive(keep_alive_ && !shared_->stopping);
  res.content_length(body.size());
  std::ostringstream os;
  os << res.base();
  std::string bytes = os.str();
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
  if (!writing_) write_next();
}

void Connection::write_next() {
  if (queue_.empty() || mode_ == Mode::closed) {
    writing_ = false;
    // An open stream with nothing to send waits for events, however long: only writes time out.
    if (mode_ == Mode::streaming) io_->expires_never();
    return;
  }
  writing_ = true;
  // Each write, streams included, must make progress within write_timeout: a peer that stopped
  // reading (or vanished) cannot pin a stream, its buffers and its session.
  io_->expires_after(shared_->options.write_timeout);
  io_->write(net::buffer(queue_.front().bytes),
             beast::bind_front_handler(&Connection::on_write, shared_from_this()));
}

void Connection::on_write(beast::error_code ec, std::size_t n) {
  if (ec || mode_ == Mode::closed) {
    // The buffer this write used is released only now that the write is over.
    writing_ = false;
    queue_.clear();
    return disconnect();
  }
  queued_bytes_ = queued_bytes_ > n ? queued_bytes_ - n : 0;
  const bool last = queue_.front().last;
  queue_.pop_front();
  if (last) {
    writing_ = false;
    return on_response_complete();
  }
  write_next();
}

}  // namespace mcpclass::transport
