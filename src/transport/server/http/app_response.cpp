#include "transport/server/http/app_response.hpp"

#include "transport/server/http/connection.hpp"

#include <boost/beast/core/string.hpp>

namespace mcpclass::transport {

std::string_view HttpAppRequest::header(std::string_view name) const {
  for (const auto& [key, value] : headers)
    if (boost::beast::iequals(key, name)) return value;
  return {};
}

template <class F>
void AppResponse::post(F&& f) {
  if (auto connection = connection_.lock()) {
    connection->post_to_self([connection, f = std::forward<F>(f)]() mutable { f(*connection); });
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
  post([exchange = exchange_, status, headers = std::move(headers),
        body = std::move(body)](Connection& c) mutable {
    c.app_respond(exchange, status, std::move(headers), std::move(body));
  });
}

void AppResponse::begin(unsigned status, HttpHeaders headers) {
  {
    std::lock_guard lock(mutex_);
    if (ended_ || begun_) return;
    begun_ = true;
  }
  post([exchange = exchange_, status, headers = std::move(headers)](Connection& c) mutable {
    c.app_begin(exchange, status, std::move(headers));
  });
}

void AppResponse::write(std::string data) {
  {
    std::lock_guard lock(mutex_);
    if (ended_ || !begun_ || data.empty()) return;
  }
  post([exchange = exchange_, data = std::move(data)](Connection& c) mutable {
    c.app_write(exchange, std::move(data));
  });
}

void AppResponse::end() {
  if (!finish()) return;
  post([exchange = exchange_](Connection& c) { c.app_end(exchange, true); });
}

void AppResponse::abort() {
  if (!finish()) return;
  post([exchange = exchange_](Connection& c) { c.app_end(exchange, false); });
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

}  // namespace mcpclass::transport
