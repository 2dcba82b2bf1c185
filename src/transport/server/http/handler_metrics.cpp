// GET /metrics: the server's series in the Prometheus text format, then the embedder's.
#include "transport/server/http/handlers.hpp"

namespace mcpclass::transport::server {

namespace http = boost::beast::http;

namespace {

class Metrics final : public HttpHandler {
 public:
  void serve(Exchange& exchange, Request&) override {
    HttpShared& shared = *exchange.shared;
    std::string text = shared.metrics->render({.connections = shared.connections.load(),
                                               .sessions = shared.sessions->size(),
                                               .streams = shared.streams.open(),
                                               .replay_bytes = shared.replay_budget->used.load()});
    if (shared.options.extra_metrics) text += shared.options.extra_metrics();
    exchange.respond(http::status::ok, std::move(text), "text/plain; version=0.0.4");
  }
};

}  // namespace

std::shared_ptr<HttpHandler> metrics_handler() {
  return std::make_shared<Metrics>();
}

}  // namespace mcpclass::transport::server
