// The HTTP front of a ClassificationService: its HTTP server with the service's /health document
// and /metrics series. The one builder of it — `mcpclass serve`/`route` and the C ABI's
// mcpc_server_start_http (so the Go and Python bindings) all call it, so /health and /metrics
// answer alike from every entry point.
// A plain function; thread-safe. The server it returns calls into `service` from its I/O threads:
// `service` must outlive it.
#pragma once

#include "mcpclass/service/classification_service.hpp"
#include "mcpclass/transport/server/http_server.hpp"
#include "mcpclass/transport/server/stdio.hpp"
#include "mcpclass/util/span_record.hpp"

#include <memory>

namespace mcpclass::service {

/// What an entry point adds to the front.
struct HttpFrontOptions {
  /// The transport's settings: start from ClassificationService::http_options() and override
  /// host, port, TLS, `stateless`, the mounted `app`. `extra_metrics`, when set, is appended to
  /// the front's series (the routing proxy's).
  transport::server::HttpServerOptions http;
  /// The counters of a stdio transport serving the same engine for the front's whole life:
  /// "stdio" joins /health's transports and its series /metrics.
  std::shared_ptr<const transport::server::StdioCounters> stdio;
  /// Where the spans of `POST /classify` and `/classify/spans` go, under the caller's
  /// `traceparent` (docs/tracing.md); null: none recorded.
  std::shared_ptr<util::SpanSink> spans;
};

/// The HTTP server of `service`, not started. GET /health (with the token, when tokens are set)
/// adds to the transport's fields the classifier's info(), `categories` (the names, in class-index
/// order), `transports` and `uptime_seconds` (since this call). GET /metrics adds to the
/// transport's series ClassificationService::prometheus(), the stdio counters, the entry point's
/// `extra_metrics` and the process heap gauges. Throws what HttpServer's constructor throws.
std::unique_ptr<transport::server::HttpServer> make_http_front(const ClassificationService& service,
                                                               HttpFrontOptions options);

}  // namespace mcpclass::service
