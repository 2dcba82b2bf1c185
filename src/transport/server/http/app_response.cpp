#include "transport/server/http/app_response.hpp"

#include "transport/server/http/exchange.hpp"

#include <boost/beast/core/string.hpp>
#include <boost/beast/http/status.hpp>

namespace mcpclass::transport::server {

std::string_view HttpAppRequest::header(std::string_view name) const {
  for (const auto& [key, value] : headers)
    if (boost::beast::iequals(key, name)) return value;
  return {};
}

namespace {

// `complete`: with the last chunk; else the client sees a truncated body.
void end_response(Exchange& e, bool complete) {
  if (e.waiting()) {
    // Ended before it began: nothing was sent, so an error still fits.
    e.keep_alive = false;
    return e.respond(
        boost::beast::http::status::bad_gateway,
        R"({"error":{"message":"the response ended before it began","type":"server_error","param":null,"code":null}})");
  }
  e.end_chunked(complete);
}

}  // namespace

template <class F>
void AppResponse::post(F&& f) {
  if (auto exchange = exchange_.lock()) {
    exchange->post(
        [exchange, connection = exchange->connection(), f = std::forward<F>(f)]() mutable {
          if (!exchange->ended()) f(*exchange);
        });
  }
}

bool AppResponse::finish() {
  std::lock_guard lock(mutex_);
  if (ended_) return false;
  ended_ = true;
  return true;
}

void AppResponse::respond(unsigned status, HttpHeaders headers, std::string body) {
  {
    std::lock_guard lock(mutex_);
    if (ended_ || begun_) return;
    ended_ = true;
  }
  post([status, headers = std::move(headers), body = std::move(body)](Exchange& e) mutable {
    std::string content_type = "application/json";
    std::erase_if(headers, [&](const auto& h) {
      if (!boost::beast::iequals(h.first, "content-type")) return false;
      content_type = h.second;
      return true;
    });
    e.respond(static_cast<boost::beast::http::status>(status), std::move(body), content_type,
              std::move(headers));
  });
}

void AppResponse::begin(unsigned status, HttpHeaders headers) {
  {
    std::lock_guard lock(mutex_);
    if (ended_ || begun_) return;
    begun_ = true;
  }
  post([status, headers = std::move(headers)](Exchange& e) { e.begin_chunked(status, headers); });
}

void AppResponse::write(std::string data) {
  {
    std::lock_guard lock(mutex_);
    if (ended_ || !begun_ || data.empty()) return;
  }
  post([data = std::move(data)](Exchange& e) { e.write_chunk(data); });
}

void AppResponse::end() {
  if (!finish()) return;
  post([](Exchange& e) { end_response(e, true); });
}

void AppResponse::abort() {
  if (!finish()) return;
  post([](Exchange& e) { end_response(e, false); });
}

void AppResponse::on_cancel(std::function<void()> f) {
  {
    std::lock_guard lock(mutex_);
    if (!cancelled_) {
      on_cancel_ = std::move(f);
      return;
    }
  }
  if (f) f();
}

void AppResponse::cancel() {
  std::function<void()> f;
  {
    std::lock_guard lock(mutex_);
    if (ended_) return;
    ended_ = true;
    cancelled_ = true;
    f = std::move(on_cancel_);
  }
  if (f) f();
}

}  // namespace mcpclass::transport::server
