// The HTTP front of a Server (Boost.Beast): Streamable HTTP on /mcp (sessions or stateless),
// legacy HTTP+SSE (GET /sse, POST /messages), the router REST dialects (POST /mcp/<method>),
// GET /health, the probes GET /health/live and /health/ready (503 once stop() began) and
// GET /metrics, and with JWT access tokens configured GET /.well-known/oauth-protected-resource;
// over plain HTTP or, with a certificate and key, HTTPS only.
// Thread-safety: start(), stop() and the destructor belong to one owner thread; port() may be
// called from any thread once start() returned. The server runs its own I/O threads.
#pragma once

#include "mcpclass/server/server.hpp"
#include "mcpclass/transport/server/http_app.hpp"
#include "mcpclass/transport/server/jwt_auth.hpp"
#include "mcpclass/util/descriptor_budget.hpp"

#include <boost/json/object.hpp>

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace mcpclass::transport::server {

struct HttpServerOptions {
  /// Address to bind. The default keeps the server off the network.
  std::string host = "127.0.0.1";
  /// 0 picks a free port (see HttpServer::port()).
  unsigned short port = 0;
  /// No Mcp-Session-Id: every POST /mcp is served by a fresh session, no GET/DELETE on /mcp.
  bool stateless = false;

  /// Extra Host header names accepted (port-insensitive). localhost, 127.0.0.1 and [::1] are always
  /// accepted. "*" accepts any Host (for deployments behind a proxy that checks it). Empty with
  /// bearer_tokens or jwt set: any Host (the check guards token-less local servers from DNS
  /// rebinding; a rebinding page cannot know a token).
  std::vector<std::string> allowed_hosts;
  /// Extra Origins accepted, either a full origin ("https://app.example:8443") or a host name.
  /// Requests without Origin pass; local origins always pass; "*" accepts any.
  std::vector<std::string> allowed_origins;
  /// When set, every endpoint needs `Authorization: Bearer <one of them>` (compared in constant
  /// time), except that GET /health without it answers only `{"status":"ok"}` (for probes).
  /// The token (like Host and Origin) is checked when the header arrives: a refused request's
  /// body is never read, and its connection is closed.
  std::vector<std::string> bearer_tokens;
  /// JWT access tokens (OAuth 2.1 resource server, MCP Authorization), on when jwt.enabled().
  /// Like bearer_tokens, every endpoint but the probes and the protected resource metadata then
  /// needs a token: one of bearer_tokens passes as before, any other is validated as a JWT
  /// (401 when it fails, 403 insufficient_scope when a tools/call lacks the tool's scopes).
  JwtAuthOptions jwt;
  /// start() refuses a non-loopback `host` without bearer_tokens or jwt unless this is set (for a
  /// server behind a proxy that authenticates).
  bool allow_unauthenticated = false;

  /// HTTPS: the PEM certificate chain (server certificate first, then intermediates) and its PEM
  /// private key (unencrypted). With both set the listener speaks TLS 1.2+ only; a client that
  /// fails the handshake (plain HTTP, or within read_timeout) just loses its connection. Both
  /// empty = plain HTTP.
  std::string tls_cert_file;
  std::string tls_key_file;

  std::size_t max_body_bytes = 4 * 1024 * 1024;  ///< Larger bodies get 413.
  /// Larger headers get 431. Also the bound of a connection's read buffer: a chunk-size line
  /// (with its extensions) or a trailer section that does not fit gets 400, and a pipelined
  /// request waits in TCP beyond it.
  std::size_t max_header_bytes = 16 * 1024;
  /// Time to receive one request (headers and body) once it started; slow clients are cut.
  std::chrono::milliseconds read_timeout{30'000};
  /// How long a keep-alive connection may sit idle between requests.
  std::chrono::milliseconds idle_timeout{60'000};
  /// How long one write may wait for the peer to take bytes (nginx's send_timeout), SSE
  /// streams included: a reader that stopped reading is disconnected once its buffers are full
  /// and a write waited this long; on GET streams also TCP_USER_TIMEOUT, for a vanished host.
  std::chrono::milliseconds write_timeout{30'000};
  /// SO_SNDBUF of accepted connections (nginx's `listen ... sndbuf=`); 0 = the kernel's
  /// autotuning. A small buffer finds a stalled SSE reader sooner (its writes block sooner).
  std::size_t send_buffer_bytes = 0;
  /// Connections open at once; one more is answered 503 and closed. 0 = the process's
  /// descriptor limit (RLIMIT_NOFILE) less 64, so accept() never runs out of descriptors.
  std::size_t max_connections = 0;
  /// When set, open connections also count against this budget, which `app` draws on for its
  /// own sockets (the routing proxy's upstream connections): a connection is refused like one
  /// over max_connections once the budget is spent.
  std::shared_ptr<util::DescriptorBudget> descriptors;
  /// Sessions alive at once; at the limit the least recently used idle session is evicted, or the
  /// initialize is refused with 503.
  std::size_t max_sessions = 1024;
  /// Sessions without requests or open streams for this long are closed.
  std::chrono::milliseconds session_idle_timeout{30 * 60'000};
  /// Open GET SSE streams (GET /mcp and GET /sse) at once; more get 503.
  std::size_t max_sse_streams = 256;
  /// ...and from one client address (0 = no per-client limit). Behind a proxy every client has
  /// the proxy's address, so leave it 0 there and let the proxy limit clients.
  std::size_t max_sse_streams_per_client = 0;
  /// How long stop() waits for requests in flight before cancelling them.
  std::chrono::milliseconds shutdown_timeout{5'000};
  /// stop() first turns GET /health/ready to 503 and keeps serving for this long, so a load
  /// balancer takes the server out of rotation before it refuses requests (0 = at once).
  std::chrono::milliseconds drain_grace{0};
  /// Prepended to every session ID this server mints: behind a load balancer, names the instance
  /// that holds the session (nginx `map $http_mcp_session_id`; docs/deploy.md).
  std::string session_id_prefix;
  std::size_t io_threads = 2;
  /// An SSE comment is written to an idle GET stream this often (0 = never), so a peer that is
  /// gone is found by write_timeout.
  std::chrono::milliseconds sse_heartbeat{15'000};
  /// The `retry:` hint (ms) sent with the priming event of resumable streams.
  unsigned sse_retry_ms = 1000;
  /// Events kept per SSE stream for `Last-Event-ID` replay...
  std::size_t event_store_size = 256;
  /// ...and bytes: per stream, for all streams of one session, and for all streams of the
  /// server. Past a budget the oldest events are forgotten (an event larger than the per-stream
  /// budget is never kept), and a GET resuming before a forgotten event gets 410.
  std::size_t event_store_bytes = 1024 * 1024;
  std::size_t event_store_session_bytes = 4 * 1024 * 1024;
  std::size_t event_store_total_bytes = 64 * 1024 * 1024;

  /// Appended to GET /metrics (Prometheus text), e.g. classification counts by category.
  std::function<std::string()> extra_metrics;
  /// Serves the paths it handles() after the Host, Origin and token checks (e.g. the routing
  /// proxy's /v1/...); the server keeps its own routes. Null = none.
  std::shared_ptr<HttpApp> app;
  /// More applications, each asked after `app` and the ones before it (the service's
  /// http_classify endpoint, mcpclass/service/http_front.hpp).
  std::vector<std::shared_ptr<HttpApp>> apps;
};

/// Returns fields merged into GET /health (categories, model, index_size, ...).
using HealthCallback = std::function<boost::json::object()>;

class HttpServer {
 public:
  HttpServer(std::shared_ptr<mcpclass::server::Server> server, HttpServerOptions options,
             HealthCallback health = {});
  /// Calls stop().
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  /// Loads the TLS certificate and key (if set), binds, listens and starts the I/O threads.
  /// Throws std::runtime_error when a TLS file is missing, unreadable or mismatched (the message
  /// names it), the address cannot be bound (port taken, bad host), or a non-loopback host would
  /// be served without bearer tokens or JWT and allow_unauthenticated is not set, or the JWT
  /// options are unusable (jwks_file unreadable, jwks_url not https, ...).
  void start();
  /// The bound port (the ephemeral one when options.port was 0); 0 before start().
  unsigned short port() const;
  /// Stops accepting, ends SSE streams, waits up to shutdown_timeout for requests in flight,
  /// cancels the rest, closes every session and joins the I/O threads. Idempotent.
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace mcpclass::transport::server
