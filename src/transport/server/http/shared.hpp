// State shared by the HTTP listener and its connections, and the guard that keeps engine threads
// from posting into an io_context that is going away.
// Thread-safety: every member may be used from any thread.
#pragma once

#include "mcpclass/transport/server/http_server.hpp"
#include "transport/server/http/metrics.hpp"
#include "transport/server/http/sessions.hpp"
#include "transport/server/http/stream_slots.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>
#include <utility>

namespace boost::asio::ssl {
class context;
}

namespace mcpclass::transport::server::jwt {
class Validator;
}

namespace mcpclass::transport::server {

class HttpFront;

/// Posts work onto I/O executors until shut(); afterwards posting does nothing.
class PostGate {
 public:
  template <class Executor, class Handler>
  void post(const Executor& executor, Handler&& handler) {
    std::lock_guard lock(mutex_);
    if (open_) boost::asio::post(executor, std::forward<Handler>(handler));
  }
  void shut() {
    std::lock_guard lock(mutex_);
    open_ = false;
  }

 private:
  std::mutex mutex_;
  bool open_ = true;
};

/// `configured`, or when 0 the descriptor limit less a reserve for files and sessions' peers.
std::size_t resolve_max_connections(std::size_t configured);

struct HttpShared {
  HttpShared(std::shared_ptr<mcpclass::server::Server> srv, HttpServerOptions opts,
             HealthCallback hc)
      : server(std::move(srv)),
        options(std::move(opts)),
        health(std::move(hc)),
        replay_budget(std::make_shared<ReplayBudget>(options.event_store_bytes,
                                                     options.event_store_total_bytes)),
        sessions(std::make_shared<HttpSessionTable>(
            server, options.max_sessions, options.event_store_size,
            options.event_store_session_bytes, replay_budget, options.session_id_prefix)) {}

  std::shared_ptr<mcpclass::server::Server> server;
  const HttpServerOptions options;
  const HealthCallback health;
  std::shared_ptr<ReplayBudget> replay_budget;
  std::shared_ptr<HttpSessionTable> sessions;
  std::shared_ptr<HttpMetrics> metrics = std::make_shared<HttpMetrics>();
  std::shared_ptr<PostGate> gate = std::make_shared<PostGate>();
  StreamSlots streams{options.max_sse_streams, options.max_sse_streams_per_client};
  std::atomic<bool> stopping{false};
  /// stop() began: /health/ready answers 503 (set drain_grace before `stopping`).
  std::atomic<bool> draining{false};
  /// Connections open now, and the most allowed (options.max_connections resolved).
  std::atomic<std::size_t> connections{0};
  const std::size_t max_connections = resolve_max_connections(options.max_connections);
  /// Set by start() when options name a certificate and key: connections speak TLS only.
  std::shared_ptr<boost::asio::ssl::context> tls;
  /// Set by start() when options.jwt is enabled: bearer tokens may be JWT access tokens.
  std::shared_ptr<const jwt::Validator> jwt;
  /// The middleware and handler table (make_front), set before the server starts.
  std::shared_ptr<const HttpFront> front;
  /// Any authentication configured (static tokens or JWT).
  bool auth_on() const { return !options.bearer_tokens.empty() || options.jwt.enabled(); }
  const std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();

  /// HTTP requests being served (stop() drains them).
  void begin_request() {
    std::lock_guard lock(drain_mutex);
    ++active;
  }
  void end_request() {
    std::lock_guard lock(drain_mutex);
    if (--active == 0) drain_cv.notify_all();
  }
  /// Waits until no request is being served or the timeout passed; true when drained.
  bool wait_drained(std::chrono::milliseconds timeout) {
    std::unique_lock lock(drain_mutex);
    return drain_cv.wait_for(lock, timeout, [&] { return active == 0; });
  }

  /// POST streams the engine holds (each keeps its Connection alive until it closes). stop()
  /// waits for them: a connection dropped by an engine thread after the io_context is gone
  /// would cancel timers of destroyed services.
  void hold_stream() {
    std::lock_guard lock(drain_mutex);
    ++engine_streams;
  }
  void release_stream() {
    std::lock_guard lock(drain_mutex);
    if (--engine_streams == 0) drain_cv.notify_all();
  }
  bool wait_streams_released(std::chrono::milliseconds timeout) {
    std::unique_lock lock(drain_mutex);
    return drain_cv.wait_for(lock, timeout, [&] { return engine_streams == 0; });
  }

  std::mutex drain_mutex;
  std::condition_variable drain_cv;
  std::size_t active = 0;
  std::size_t engine_streams = 0;
};

/// Serves one accepted connection until it closes. `socket` must use a strand executor.
/// `io_owner` keeps the socket's io_context alive for as long as the connection lives: the engine
/// may still hold a connection (a request's stream) after stop() joined the I/O threads.
void serve_connection(boost::asio::ip::tcp::socket socket, std::shared_ptr<HttpShared> shared,
                      std::shared_ptr<boost::asio::io_context> io_owner);

}  // namespace mcpclass::transport::server
