// The mounted application (HttpServerOptions::app): hands it the request, then writes what its
// AppResponse sends, whole or as chunks, while a read watches for the client leaving (which
// cancels the app's work) and keeps what a pipelined request sends for after the answer.
#include "mcpclass/transport/server/http_app.hpp"
#include "transport/server/http/app_response.hpp"
#include "transport/server/http/connection.hpp"

#include <boost/beast/http.hpp>

namespace mcpclass::transport {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

void Connection::serve_app(Request& req, std::string_view path) {
  HttpAppRequest request;
  request.method = std::string(req.method_string());
  request.target = std::string(req.target());
  request.path = std::string(path);
  for (const auto& field : req)
    request.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
  request.body = std::move(req.body());

  guard_.emplace(*shared_, nullptr);  // in flight: stop() waits for it
  mode_ = Mode::waiting;
  app_response_ = std::make_shared<AppResponse>(weak_from_this(), exchange_);
  auto response = app_response_;
  watch_app_client();
  shared_->options.app->handle(std::move(request), std::move(response));
}

void Connection::watch_app_client() {
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
    self->watch_app_client();
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

void Connection::app_respond(std::uint64_t exchange, unsigned status, Headers headers,
                             std::string body) {
  if (exchange != exchange_ || mode_ == Mode::closed || !app_response_) return;
  std::string content_type = "application/json";
  std::erase_if(headers, [&](const auto& h) {
    if (!beast::iequals(h.first, "content-type")) return false;
    content_type = h.second;
    return true;
  });
  respond(static_cast<http::status>(status), std::move(body), content_type, std::move(headers));
}

void Connection::app_begin(std::uint64_t exchange, unsigned status, Headers headers) {
  if (exchange != exchange_ || mode_ == Mode::closed || !app_response_) return;
  std::string head = begin_head(status, {});
  append_fields(head, headers);
  end_head(head, keep_alive_ && !shared_->stopping, std::nullopt);
  status_ = status;
  mode_ = Mode::streaming;
  enqueue(std::move(head), false);
}

void Connection::app_write(std::uint64_t exchange, std::string data) {
  if (exchange != exchange_ || mode_ != Mode::streaming || !app_response_) return;
  // A client that reads slower than the upstream sends is cut rather than buffered without end.
  if (queued_bytes_ > 0 && queued_bytes_ + data.size() > kMaxQueuedBytes) return disconnect();
  queued_bytes_ += data.size();
  enqueue(chunk(data), false);
}

void Connection::app_end(std::uint64_t exchange, bool complete) {
  if (exchange != exchange_ || mode_ == Mode::closed || !app_response_) return;
  if (mode_ != Mode::streaming) {
    // Ended before it began: nothing was sent, so an error still fits.
    keep_alive_ = false;
    return respond(
        http::status::bad_gateway,
        R"({"error":{"message":"the response ended before it began","type":"server_error","param":null,"code":null}})");
  }
  if (!complete) keep_alive_ = false;  // no last chunk: the client sees a truncated body
  enqueue(complete ? "0\r\n\r\n" : "", true);
}

}  // namespace mcpclass::transport
