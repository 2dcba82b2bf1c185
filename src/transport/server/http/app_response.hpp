// Internal: the HttpAppResponse of one Exchange of a mounted app. The app calls it from any
// thread; each call is posted to the connection's strand (through the gate), where it is dropped
// when the exchange already ended.
// Thread-safety: every member may be called from any thread.
#pragma once

#include "mcpclass/transport/server/http_app.hpp"

#include <functional>
#include <memory>
#include <mutex>

namespace mcpclass::transport::server {

class Exchange;

class AppResponse final : public HttpAppResponse {
 public:
  explicit AppResponse(std::weak_ptr<Exchange> exchange) : exchange_(std::move(exchange)) {}

  void respond(unsigned status, HttpHeaders headers, std::string body) override;
  void begin(unsigned status, HttpHeaders headers) override;
  void write(std::string data) override;
  void end() override;
  void abort() override;
  void on_cancel(std::function<void()> f) override;

  /// The client went away (or the connection is gone) before the response ended: runs the
  /// on_cancel callback once. Called when the exchange is released.
  void cancel();

 private:
  /// Marks the response ended; false when it already was (or was cancelled).
  bool finish();
  template <class F>
  void post(F&& f);

  const std::weak_ptr<Exchange> exchange_;
  std::mutex mutex_;
  bool ended_ = false;
  bool begun_ = false;
  bool cancelled_ = false;
  std::function<void()> on_cancel_;
};

}  // namespace mcpclass::transport::server
