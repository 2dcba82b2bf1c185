// HttpServer: the listener, the I/O threads, the idle-session sweep and the shutdown sequence.
#include "mcpclass/transport/server/http_server.hpp"

#include "net/tls_context.hpp"
#include "transport/server/http/front.hpp"
#include "transport/server/http/shared.hpp"
#include "transport/server/jwt/validator.hpp"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/write.hpp>

#include <algorithm>
#include <atomic>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace mcpclass::transport::server {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

std::size_t resolve_max_connections(std::size_t configured) {
  return configured > 0 ? configured : util::socket_descriptor_limit();
}

namespace {

// The answer to a connection over max_connections: written once, then the socket closes.
void refuse_connection(tcp::socket socket, bool tls) {
  static const std::string kBusy = [] {
    const std::string body =
        R"({"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"Too many connections"}})";
    return "HTTP/1.1 503 Service Unavailable\r\nServer: mcpclass\r\nContent-Type: "
           "application/json\r\nContent-Length: " +
           std::to_string(body.size()) + "\r\nConnection: close\r\nRetry-After: 1\r\n\r\n" + body;
  }();
  auto s = std::make_shared<tcp::socket>(std::move(socket));
  if (tls) {  // a TLS client could not read a plain answer
    boost::system::error_code ignored;
    s->close(ignored);
    return;
  }
  asio::async_write(*s, asio::buffer(kBusy.data(), kBusy.size()),
                    [s](boost::system::error_code, std::size_t) {
                      boost::system::error_code ignored;
                      s->shutdown(tcp::socket::shutdown_both, ignored);
                      s->close(ignored);
                    });
}

}  // namespace

// An io_context whose handlers can be destroyed (shutdown) before the context is: after stop()
// joined the I/O threads, the engine may still hold connections (a request's stream), and they
// keep the context alive, so their sockets are destroyed while its services still exist.
// One thread runs each (concurrency hint 1).
class OwnedIoContext : public asio::io_context {
 public:
  OwnedIoContext() : asio::io_context(1) {}
  void destroy_handlers() { shutdown(); }
};

struct HttpServer::Impl {
  Impl(std::shared_ptr<mcpclass::server::Server> server, HttpServerOptions options,
       HealthCallback health)
      : shared(std::make_shared<HttpShared>(std::move(server), std::move(options),
                                            std::move(health))) {
    shared->front = make_front(*shared);
  }

  // Connections take turns over the contexts and stay on theirs. Sharing one context between the
  // threads cost a proxied request ~50 us at one connection: each event woke the other thread
  // to take over the reactor (bench/results/route-signals.md).
  void accept() {
    auto owner = contexts[turn++ % contexts.size()];
    acceptor.async_accept(asio::make_strand(*owner),
                          [this, owner](boost::system::error_code ec, tcp::socket socket) {
                            if (ec == asio::error::operation_aborted || !acceptor.is_open()) return;
                            if (ec) {
                              // Out of descriptors or similar: back off briefly instead of
                              // spinning.
                              retry.expires_after(std::chrono::milliseconds(50));
                              retry.async_wait([this](boost::system::error_code wait_ec) {
                                if (!wait_ec) accept();
                              });
                              return;
                            }
                            if (full()) {
                              refuse_connection(std::move(socket), shared->tls != nullptr);
                            } else {
                              serve_connection(std::move(socket), shared, owner);
                            }
                            accept();
                          });
  }

  // One more connection would pass max_connections, or the descriptors shared with the app.
  bool full() const {
    const auto& budget = shared->options.descriptors;
    return shared->connections.load() >= shared->max_connections ||
           (budget && budget->in_use() >= budget->limit());
  }

  void sweep() {
    const auto timeout = shared->options.session_idle_timeout;
    const auto period = std::clamp<std::chrono::milliseconds>(
        timeout / 2, std::chrono::milliseconds(100), std::chrono::milliseconds(30'000));
    sweeper.expires_after(period);
    sweeper.async_wait([this, timeout](boost::system::error_code ec) {
      if (ec) return;
      shared->sessions->evict_idle(std::chrono::steady_clock::now() - timeout);
      sweep();
    });
  }

  std::shared_ptr<HttpShared> shared;
  // An io_context per I/O thread; the first also runs the acceptor and the timers.
  std::vector<std::shared_ptr<OwnedIoContext>> contexts{std::make_shared<OwnedIoContext>()};
  asio::io_context& ioc = *contexts.front();
  std::size_t turn = 0;  // the acceptor's handlers only
  std::vector<asio::executor_work_guard<asio::io_context::executor_type>> work;
  tcp::acceptor acceptor{ioc};
  asio::steady_timer retry{ioc};
  asio::steady_timer sweeper{ioc};
  std::vector<std::thread> threads;
  unsigned short port = 0;
  bool started = false;
  bool stopped = false;
};

HttpServer::HttpServer(std::shared_ptr<mcpclass::server::Server> server, HttpServerOptions options,
                       HealthCallback health)
    : impl_(std::make_unique<Impl>(std::move(server), std::move(options), std::move(health))) {}

HttpServer::~HttpServer() {
  stop();
}

void HttpServer::start() {
  Impl& s = *impl_;
  if (s.started) throw std::logic_error("HttpServer::start called twice");
  const auto& options = s.shared->options;
  if (!options.tls_cert_file.empty() || !options.tls_key_file.empty()) {
    if (options.tls_cert_file.empty() || options.tls_key_file.empty())
      throw std::runtime_error("HTTP: TLS needs both a certificate chain file and a key file");
    s.shared->tls = net::make_server_tls_context(options.tls_cert_file, options.tls_key_file);
  }
  boost::system::error_code ec;
  const auto address = asio::ip::make_address(options.host, ec);
  if (ec)
    throw std::runtime_error("HTTP: bad listen address '" + options.host + "': " + ec.message());
  // Off loopback, anyone who can reach the port could classify and read the metrics.
  if (!address.is_loopback() && !s.shared->auth_on() && !options.allow_unauthenticated)
    throw std::runtime_error(
        "HTTP: refusing to serve " + options.host +
        " without authentication: set bearer tokens (server.http.auth.bearer_tokens or "
        "bearer_tokens_file) or JWT access tokens (server.http.auth.jwt), or "
        "server.http.auth.allow_unauthenticated: true behind a proxy that authenticates");
  if (options.jwt.enabled()) s.shared->jwt = std::make_shared<const jwt::Validator>(options.jwt);
  const tcp::endpoint endpoint(address, options.port);
  auto fail = [&](const char* what) {
    throw std::runtime_error("HTTP: cannot " + std::string(what) + " " + options.host + ":" +
                             std::to_string(options.port) + ": " + ec.message());
  };
  s.acceptor.open(endpoint.protocol(), ec);
  if (ec) fail("open");
  s.acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  s.acceptor.bind(endpoint, ec);
  if (ec) fail("bind");
  s.acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) fail("listen on");
  s.port = s.acceptor.local_endpoint().port();
  s.started = true;
  if (options.descriptors)
    options.descriptors->track(
        std::shared_ptr<const std::atomic<std::size_t>>(s.shared, &s.shared->connections));

  const std::size_t n = std::max<std::size_t>(1, options.io_threads);
  while (s.contexts.size() < n) s.contexts.push_back(std::make_shared<OwnedIoContext>());
  for (const auto& context : s.contexts) s.work.push_back(asio::make_work_guard(*context));
  s.accept();
  s.sweep();
  for (const auto& context : s.contexts)
    s.threads.emplace_back([context = context.get()] { context->run(); });
}

unsigned short HttpServer::port() const {
  return impl_->port;
}

void HttpServer::stop() {
  Impl& s = *impl_;
  if (!s.started || s.stopped) return;
  s.stopped = true;
  HttpShared& shared = *s.shared;
  // Out of the load balancer's rotation first, still serving what it sends meanwhile.
  shared.draining = true;
  if (shared.options.drain_grace.count() > 0)
    std::this_thread::sleep_for(shared.options.drain_grace);
  shared.stopping = true;
  // Stop accepting; let GET streams end; wait for requests in flight, then cancel the rest.
  asio::post(s.ioc, [&s] {
    boost::system::error_code ignored;
    s.acceptor.close(ignored);
    s.retry.cancel();
    s.sweeper.cancel();
  });
  shared.sessions->end_streams();
  shared.wait_drained(shared.options.shutdown_timeout);
  shared.sessions->close_all();
  if (shared.options.app) shared.options.app->cancel_all();
  for (const auto& app : shared.options.apps) app->cancel_all();
  // Cancelled requests answer (503/empty stream) quickly; give those writes a moment.
  shared.wait_drained(std::chrono::milliseconds(500));
  shared.wait_streams_released(shared.options.shutdown_timeout);
  shared.gate->shut();
  s.work.clear();
  for (const auto& context : s.contexts) context->stop();
  for (auto& t : s.threads) {
    if (t.joinable()) t.join();
  }
  s.threads.clear();
  // Pending handlers own connections that own the context: destroying them breaks the cycle.
  for (const auto& context : s.contexts) context->destroy_handlers();
}

}  // namespace mcpclass::transport::server
