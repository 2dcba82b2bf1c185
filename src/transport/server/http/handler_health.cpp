// GET /health (details for authorized callers only: a liveness probe carries no token) and the
// probes GET /health/live and GET /health/ready (503 once stop() began).
#include "transport/server/http/handlers.hpp"
#include "transport/server/http/middleware.hpp"

#include <boost/json.hpp>

namespace mcpclass::transport::server {

namespace http = boost::beast::http;
namespace json = boost::json;

namespace {

class Health final : public HttpHandler {
 public:
  void serve(Exchange& exchange, Request& req) override {
    const HttpShared& shared = *exchange.shared;
    json::object body{{"status", "ok"}};
    // The caller passed the token guard: the body names the classifier and load.
    const bool detailed = !shared.auth_on() || authorized_quietly(shared, req);
    if (!detailed) return exchange.respond(http::status::ok, json::serialize(body));
    if (shared.health) {
      for (auto& [k, v] : shared.health()) body[k] = v;
    }
    auto add = [&](std::string_view key, json::value v) {
      if (!body.contains(key)) body[key] = std::move(v);
    };
    add("tools", shared.server->tool_count());
    json::array transports{"streamable-http", "sse", "rest"};
    add("transports", std::move(transports));
    add("mode", shared.options.stateless ? "stateless" : "stateful");
    add("sessions", shared.sessions->size());
    add("uptime_seconds",
        std::chrono::duration<double>(Exchange::Clock::now() - shared.started).count());
    exchange.respond(http::status::ok, json::serialize(body));
  }
};

class Liveness final : public HttpHandler {
 public:
  void serve(Exchange& exchange, Request&) override {
    exchange.respond(http::status::ok, R"({"status":"ok"})");
  }
};

class Readiness final : public HttpHandler {
 public:
  void serve(Exchange& exchange, Request&) override {
    if (exchange.shared->draining)
      return exchange.respond(http::status::service_unavailable, R"({"status":"draining"})");
    exchange.respond(http::status::ok, R"({"status":"ready"})");
  }
};

}  // namespace

std::shared_ptr<HttpHandler> health_handler() {
  return std::make_shared<Health>();
}
std::shared_ptr<HttpHandler> liveness_handler() {
  return std::make_shared<Liveness>();
}
std::shared_ptr<HttpHandler> readiness_handler() {
  return std::make_shared<Readiness>();
}

}  // namespace mcpclass::transport::server
