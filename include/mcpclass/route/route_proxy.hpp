// The OpenAI-compatible routing proxy behind `mcpclass route` (docs/route.md): mounted on an
// HttpServer (HttpServerOptions::app), it serves POST /v1/chat/completions (a Router evaluates
// the request: signals, decision, guards, rewrite; then forward and stream the answer back),
// POST /v1/route/explain (the evaluation alone, nothing forwarded) and GET /v1/models.
// Thread-safety: handle() runs concurrently on the server's I/O threads; prometheus(),
// cancel_all(), prepare() and the swap it returns may be called from any thread; stop() and the
// destructor belong to the owner, after the HttpServer stopped.
#pragma once

#include "mcpclass/route/router.hpp"
#include "mcpclass/transport/server/http_app.hpp"
#include "mcpclass/util/descriptor_budget.hpp"
#include "mcpclass/util/span_record.hpp"

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace mcpclass::route {

struct RouteProxyOptions {
  /// Longer prompts are evaluated on their first max_text_length bytes.
  std::size_t max_text_length = 10'000;
  /// Threads that run evaluations that may run a model (Router::slow(); others run on the I/O
  /// thread).
  std::size_t worker_threads = 2;
  /// The descriptors the proxy's upstream sockets share with the HTTP server's connections
  /// (HttpServerOptions::descriptors): a request that would need one more than the budget holds
  /// is answered 503 `too_many_connections`. Null: not counted.
  std::shared_ptr<util::DescriptorBudget> descriptors;
  /// Where the spans of each request go (the request, its classification, each upstream call;
  /// docs/tracing.md). Null: none are recorded (the traceparent is still forwarded).
  std::shared_ptr<util::SpanSink> spans;
  /// One line about a request that went wrong (an upstream failure, a refusal), with its trace
  /// id. Empty: not logged. Called on the I/O and worker threads.
  std::function<void(std::string_view)> log;
};

class RouteProxy final : public transport::server::HttpApp {
 public:
  /// Routes with `router`; resolves each api_key "${NAME}" of its route settings and starts a
  /// connection pool per model. Throws ConfigError (an unset variable, an unusable ca_file).
  RouteProxy(std::shared_ptr<const Router> router, RouteProxyOptions options);
  /// For a reload: builds the upstreams of `router`'s route settings as the constructor does
  /// (throws the same ConfigError, and nothing changed) and returns the swap, which makes them
  /// and `router` what later requests are routed with, together; requests in flight finish on
  /// theirs. Route settings equal to the current ones keep the upstreams and their connections.
  std::function<void()> prepare(std::shared_ptr<const Router> router);
  /// Calls stop().
  ~RouteProxy() override;
  RouteProxy(const RouteProxy&) = delete;
  RouteProxy& operator=(const RouteProxy&) = delete;

  bool handles(std::string_view path) const override;
  void handle(transport::server::HttpAppRequest request,
              std::shared_ptr<transport::server::HttpAppResponse> response) override;
  std::string metrics_label() const override { return "route"; }
  std::string too_large_body(std::string_view message) const override;
  void cancel_all() override;

  /// `mcpclass_route_*` series (Prometheus text).
  std::string prometheus() const;
  /// Cancels the upstream exchanges still running, joins the workers and the pools' threads.
  /// Idempotent.
  void stop();

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace mcpclass::route
