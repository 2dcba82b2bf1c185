// Request dispatch: the drain check, path routing, the Host/Origin guards (every route) and the
// token guard, and the two endpoints that need no engine (GET /health, GET /metrics).
#include "transport/server/http/connection.hpp"

#include "mcpclass/jsonrpc/message.hpp"
#include "transport/server/http/guard.hpp"
#include "transport/server/http/rpc_message.hpp"

#include <boost/json.hpp>

namespace mcpclass::transport {

namespace http = boost::beast::http;
namespace json = boost::json;

void Connection::handle(Request req) {
  keep_alive_ = req.keep_alive();
  const std::string_view target = req.target();
  const std::string_view path = target.substr(0, target.find('?'));
  const std::string_view query =
      target.find('?') == std::string_view::npos ? "" : target.substr(target.find('?') + 1);
  const auto verb = req.method();

  if (shared_->stopping && !admitted_before_stop_) {
    keep_alive_ = false;
    return respond(http::status::service_unavailable,
                   rpc_error_body(jsonrpc::kInternalError, "Service Unavailable: shutting down"));
  }
  const bool mcp = path == "/mcp" || path.starts_with("/mcp/");
  const bool legacy = path == "/sse" || path == "/messages";
  const bool probe = path == "/health/live" || path == "/health/ready";
  const auto& app = shared_->options.app;
  const bool app_path = app && !mcp && !legacy && app->handles(path);
  if (app_path) {
    route_ = app->metrics_label();
  } else if (path == "/health" || path == "/metrics" || probe) {
    route_ = probe ? "health" : path.substr(1);
  } else if (mcp) {
    route_ = path == "/mcp" ? "mcp" : "router";
  } else if (legacy) {
    route_ = "sse";
  } else if (!path.starts_with("/.well-known/")) {
    return respond(http::status::not_found, R"({"error":"not found"})");
  }

  // DNS rebinding: only local (or configured) Host and Origin values reach the server.
  const auto& options = shared_->options;
  const bool any_host = options.allowed_hosts.empty() && shared_->auth_on();
  if (!any_host && !host_allowed(req[http::field::host], options.allowed_hosts)) {
    return respond(http::status::forbidden,
                   rpc_error_body(jsonrpc::kInvalidRequest, "Forbidden: Host not allowed"));
  }
  if (!origin_allowed(req[http::field::origin], shared_->options.allowed_origins)) {
    return respond(http::status::forbidden,
                   rpc_error_body(jsonrpc::kInvalidRequest, "Forbidden: Origin not allowed"));
  }
  // Where a client learns how to get a token: open to all.
  if (path.starts_with("/.well-known/")) {
    if (protected_resource_metadata(path, verb)) return;
    return respond(http::status::not_found, R"({"error":"not found"})");
  }
  // Probes carry no token and need no more than the status.
  if (probe) {
    if (verb != http::verb::get) return method_not_allowed("GET");
    if (path == "/health/live") return respond(http::status::ok, R"({"status":"ok"})");
    if (shared_->draining)
      return respond(http::status::service_unavailable, R"({"status":"draining"})");
    return respond(http::status::ok, R"({"status":"ready"})");
  }
  // A liveness probe carries no token: without one /health says only that the server is up.
  if (path == "/health") {
    if (verb != http::verb::get) return method_not_allowed("GET");
    return health(!shared_->auth_on() || authorized_quietly(req));
  }
  if (!authorize(req)) return;

  if (app_path) return serve_app(req, path);
  if (path == "/metrics") {
    if (verb != http::verb::get) return method_not_allowed("GET");
    return metrics();
  }
  if (path == "/mcp") {
    if (verb == http::verb::post) return post_mcp(req);
    if (shared_->options.stateless) return method_not_allowed("POST");
    if (verb == http::verb::get) return get_mcp(req);
    if (verb == http::verb::delete_) return delete_mcp(req);
    return method_not_allowed("GET, POST, DELETE");
  }
  if (mcp) {
    if (verb != http::verb::post) return method_not_allowed("POST");
    return post_router(req, path.substr(5));
  }
  if (path == "/sse") {
    if (verb != http::verb::get) return method_not_allowed("GET");
    return get_legacy();
  }
  if (verb != http::verb::post) return method_not_allowed("POST");
  post_legacy(req, query);
}

void Connection::method_not_allowed(std::string allow) {
  respond(http::status::method_not_allowed,
          rpc_error_body(jsonrpc::kInvalidRequest, "Method Not Allowed"), "application/json",
          {{"Allow", std::move(allow)}});
}

void Connection::health(bool detailed) {
  json::object body{{"status", "ok"}};
  if (!detailed) return respond(http::status::ok, json::serialize(body));
  if (shared_->health) {
    for (auto& [k, v] : shared_->health()) body[k] = v;
  }
  auto add = [&](std::string_view key, json::value v) {
    if (!body.contains(key)) body[key] = std::move(v);
  };
  add("tools", shared_->server->tool_count());
  json::array transports{"streamable-http", "sse", "rest"};
  add("transports", std::move(transports));
  add("mode", shared_->options.stateless ? "stateless" : "stateful");
  add("sessions", shared_->sessions->size());
  add("uptime_seconds", std::chrono::duration<double>(Clock::now() - shared_->started).count());
  respond(http::status::ok, json::serialize(body));
}

void Connection::metrics() {
  std::string text =
      shared_->metrics->render({.connections = shared_->connections.load(),
                                .sessions = shared_->sessions->size(),
                                .streams = shared_->streams.open(),
                                .replay_bytes = shared_->replay_budget->used.load()});
  if (shared_->options.extra_metrics) text += shared_->options.extra_metrics();
  respond(http::status::ok, std::move(text), "text/plain; version=0.0.4");
}

}  // namespace mcpclass::transport
