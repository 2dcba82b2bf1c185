// net::HttpEngine on the caller's io_context (the routing proxy runs its upstream exchanges on
// the client connection's I/O thread): exchanges run on that thread and keep their connection,
// stop() ends them there, and once the context stopped, stop() closes them on the caller's thread.
#include "net/http_client.hpp"

#include <doctest/doctest.h>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/write.hpp>

#include <atomic>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using namespace mcpclass::net;

// The owner of a context destroys its pending handlers before the context itself, as the HTTP
// server does (they may own what keeps the context alive).
class ShutdownContext : public asio::io_context {
 public:
  ShutdownContext() : asio::io_context(1) {}
  void destroy_handlers() { shutdown(); }
};

// One connection: answers `answers` requests with "ok" on it (keep-alive), then waits for the
// client to close it; with answers 0 it reads the request and never answers.
class Peer {
 public:
  explicit Peer(int answers) : acceptor_(ioc_, {asio::ip::make_address("127.0.0.1"), 0}) {
    port_ = acceptor_.local_endpoint().port();
    thread_ = std::thread([this, answers] {
      tcp::socket socket(ioc_);
      acceptor_.accept(socket);
      boost::system::error_code ec;
      std::string buffer;
      for (int i = 0; i < answers || answers == 0; ++i) {
        const auto n = asio::read_until(socket, asio::dynamic_buffer(buffer), "\r\n\r\n", ec);
        if (ec) break;
        buffer.erase(0, n);
        requests_.fetch_add(1);
        if (answers == 0) continue;
        asio::write(socket,
                    asio::buffer(std::string("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")),
                    ec);
      }
      char byte = 0;
      asio::read(socket, asio::buffer(&byte, 1), ec);  // until the client closes
      closed_by_client_ = ec == asio::error::eof || ec == asio::error::connection_reset;
    });
  }
  ~Peer() {
    if (thread_.joinable()) thread_.join();
  }
  void join() { thread_.join(); }
  HttpUrl url() const { return parse_http_url("http://127.0.0.1:" + std::to_string(port_) + "/"); }
  int requests() const { return requests_.load(); }
  bool closed_by_client() const { return closed_by_client_; }

 private:
  asio::io_context ioc_;
  tcp::acceptor acceptor_;
  unsigned short port_ = 0;
  std::atomic<int> requests_{0};
  bool closed_by_client_ = false;
  std::thread thread_;
};

// A context run by a thread of its own; stopped, then its handlers destroyed, at the end.
struct RunningContext {
  std::shared_ptr<ShutdownContext> context = std::make_shared<ShutdownContext>();
  asio::executor_work_guard<asio::io_context::executor_type> work = asio::make_work_guard(*context);
  std::thread runner{[this] { context->run(); }};

  void stop() {
    work.reset();
    context->stop();
    if (runner.joinable()) runner.join();
  }
  ~RunningContext() {
    stop();
    context->destroy_handlers();
  }
};

HttpRequest get() {
  HttpRequest req;
  req.method = "GET";
  req.target = "/";
  req.timeout = std::chrono::seconds(30);
  return req;
}

}  // namespace

TEST_CASE("http engine on a context: exchanges run on its thread and share one kept connection") {
  RunningContext running;
  Peer peer(3);
  {
    HttpEngine engine(running.context, std::chrono::seconds(5), "", 1 << 20, 1);
    std::vector<std::string> bodies;
    std::vector<std::thread::id> threads;
    std::promise<void> done;
    // Each exchange starts the next from its on_end, on the context's own thread.
    std::function<void()> next = [&] {
      auto body = std::make_shared<std::string>();
      ExchangeCallbacks cb;
      cb.on_data = [body](std::string_view d) { body->append(d); };
      cb.on_end = [&, body](const HttpError& error) {
        threads.push_back(std::this_thread::get_id());
        bodies.push_back(error ? "error: " + error.message : *body);
        if (bodies.size() < 3) return next();
        done.set_value();
      };
      engine.start(peer.url(), get(), std::move(cb));
    };
    next();
    REQUIRE(done.get_future().wait_for(std::chrono::seconds(10)) == std::future_status::ready);
    CHECK(bodies == std::vector<std::string>{"ok", "ok", "ok"});
    for (const auto& id : threads) CHECK(id == running.runner.get_id());
    CHECK(peer.requests() == 3);  // one connection (the peer accepts one), kept between them
  }                               // the engine closes its kept connection on the context
  peer.join();
  CHECK(peer.closed_by_client());
}

// Starts an exchange with `peer` on `engine` and waits until its request was sent.
void start_and_wait_sent(HttpEngine& engine, const Peer& peer,
                         std::function<void(const HttpError&)> on_end) {
  std::promise<void> sent;
  ExchangeCallbacks cb;
  cb.on_sent = [&sent] { sent.set_value(); };
  cb.on_end = std::move(on_end);
  engine.start(peer.url(), get(), std::move(cb));
  REQUIRE(sent.get_future().wait_for(std::chrono::seconds(10)) == std::future_status::ready);
}

TEST_CASE("http engine on a context: stop() ends an exchange there, after the engine is gone") {
  RunningContext running;
  Peer peer(0);
  std::promise<std::pair<HttpError, std::thread::id>> ended;
  {
    HttpEngine engine(running.context, std::chrono::seconds(5), "", 1 << 20, 1);
    start_and_wait_sent(engine, peer, [&](const HttpError& error) {
      ended.set_value({error, std::this_thread::get_id()});
    });
  }  // ~HttpEngine: stop() does not wait
  auto end = ended.get_future();
  REQUIRE(end.wait_for(std::chrono::seconds(10)) == std::future_status::ready);
  const auto [error, thread] = end.get();
  CHECK(error.kind == HttpFailure::cancelled);
  CHECK(thread == running.runner.get_id());
  peer.join();
  CHECK(peer.closed_by_client());
}

TEST_CASE("http engine on a context: once the context stopped, stop() closes on the caller") {
  RunningContext running;
  Peer peer(0);
  std::atomic<bool> ended{false};
  HttpEngine engine(running.context, std::chrono::seconds(5), "", 1 << 20, 1);
  start_and_wait_sent(engine, peer, [&](const HttpError&) { ended = true; });
  running.stop();
  engine.stop();  // nothing runs the context: the connection is closed here
  peer.join();
  CHECK(peer.closed_by_client());
  CHECK_FALSE(ended.load());
  running.context->destroy_handlers();  // the exchange's coroutine goes without running on
  CHECK_FALSE(ended.load());
}

TEST_CASE("http engine on a context: no context is refused") {
  CHECK_THROWS_AS(HttpEngine(std::shared_ptr<asio::io_context>(), std::chrono::seconds(1), ""),
                  std::invalid_argument);
}
