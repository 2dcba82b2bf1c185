// The OpenAI-compatible routing proxy behind `mcpclass route` (docs/route.md): mounted on an
// HttpServer (HttpServerOptions::app), it serves POST /v1/chat/completions (classify the prompt,
// pick the model and reasoning, forward, stream the answer back) and GET /v1/models.
// Thread-safety: handle() runs concurrently on the server's I/O threads; prometheus(),
// cancel_all(), prepare() and the swap it returns may be called from any thread; stop() and the
// destructor belong to the owner, after the HttpServer stopped.
#pragma once

#include "mcpclass/classify/classifier.hpp"
#include "mcpclass/config/route_settings.hpp"
#include "mcpclass/transport/server/http_app.hpp"
#include "mcpclass/util/descriptor_budget.hpp"

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace mcpclass::route {

struct RouteProxyOptions {
  /// What routed requests are classified with, until prepare() swaps in another.
  std::shared_ptr<const classify::Classifier> classifier;
  /// Longer prompts are classified on their first max_text_length bytes.
  std::size_t max_text_length = 10'000;
  /// Threads that run classifiers other than rules (rules run on the I/O thread).
  std::size_t worker_threads = 2;
  /// The descriptors the proxy's upstream sockets share with the HTTP server's connections
  /// (HttpServerOptions::descriptors): a request that would need one more than the budget holds
  /// is answered 503 `too_many_connections`. Null: not counted.
  std::shared_ptr<util::DescriptorBudget> descriptors;
};

class RouteProxy final : public transport::server::HttpApp {
 public:
  /// Resolves each api_key "${NAME}" and starts a connection pool per model. Throws ConfigError
  /// (an unset variable, an unusable ca_file).
  RouteProxy(config::RouteSettings settings, RouteProxyOptions options);
  /// For a reload: builds the upstreams of `settings` as the constructor does (throws the same
  /// ConfigError, and nothing changed) and returns the swap, which makes them and `classifier`
  /// what later requests are routed with, together; requests in flight finish on theirs. Settings
  /// equal to the current ones keep the current upstreams and their connections.
  std::function<void()> prepare(config::RouteSettings settings,
                                std::shared_ptr<const classify::Classifier> classifier);
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
