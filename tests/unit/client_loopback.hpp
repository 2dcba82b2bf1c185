// Test helper: a ClientTransport wired straight into an in-process server::Session.
#pragma once

#include "mcpclass/client/errors.hpp"
#include "mcpclass/client/transport.hpp"
#include "mcpclass/server/server.hpp"
#include "mcpclass/server/session.hpp"
#include "mcpclass/server/stream.hpp"

#include <atomic>
#include <memory>
#include <mutex>

namespace mcpclass::test {

class LoopbackTransport : public client::ClientTransport,
                          public std::enable_shared_from_this<LoopbackTransport> {
 public:
  explicit LoopbackTransport(std::shared_ptr<server::Server> server,
                             server::SessionOptions options = {})
      : server_(std::move(server)), options_(options) {}
  ~LoopbackTransport() override { close(); }

  void start(client::TransportHandlers handlers) override {
    std::lock_guard lock(mutex_);
    handlers_ = std::make_shared<client::TransportHandlers>(std::move(handlers));
    session_ = server_->create_session(options_);
    session_->set_notification_stream(std::make_shared<ToClient>(handlers_));
    open_ = true;
    ++starts;
  }
  void send(const boost::json::value& message) override {
    std::shared_ptr<server::Session> session;
    std::shared_ptr<client::TransportHandlers> handlers;
    {
      std::lock_guard lock(mutex_);
      if (!open_) throw client::TransportError("loopback closed");
      session = session_;
      handlers = handlers_;
    }
    ++sent;
    session->handle(message, std::make_shared<ToClient>(handlers));
  }
  void close() override {
    std::shared_ptr<server::Session> session;
    {
      std::lock_guard lock(mutex_);
      open_ = false;
      session.swap(session_);
    }
    if (session) session->close();
  }
  bool is_open() const override {
    std::lock_guard lock(mutex_);
    return open_;
  }
  std::string describe() const override { return "loopback"; }

  std::atomic<int> starts{0};
  std::atomic<int> sent{0};

 private:
  struct ToClient : server::Stream {
    explicit ToClient(std::shared_ptr<client::TransportHandlers> h) : handlers(std::move(h)) {}
    void send(boost::json::value message) override {
      if (handlers->on_message) handlers->on_message(std::move(message));
    }
    void close(std::optional<boost::json::value> final_message) override {
      if (final_message && handlers->on_message) handlers->on_message(std::move(*final_message));
    }
    std::shared_ptr<client::TransportHandlers> handlers;
  };

  std::shared_ptr<server::Server> server_;
  server::SessionOptions options_;
  mutable std::mutex mutex_;
  std::shared_ptr<client::TransportHandlers> handlers_;
  std::shared_ptr<server::Session> session_;
  bool open_ = false;
};

}  // namespace mcpclass::test
