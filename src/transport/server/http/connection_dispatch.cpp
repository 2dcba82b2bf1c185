// Request dispatch: admission when the header arrives (the drain check, unknown paths, the
// Host/Origin guards and the token guard, all before the body is read), path routing once the
// body is in, and the two endpoints that need no engine (GET /health, GET /metrics).
#include "transport/server/http/connection.hpp"

#include "mcpclass/jsonrpc/message.hpp"
#include "mcpclass/transport/server/http_app.hpp"
#include "transport/server/http/guard.hpp"
#include "transport/server/http/rpc_message.hpp"

#include <boost/json.hpp>

namespace mcpclass::transport {

namespace http = boost::beast::http;
namespace json = boost::json;

namespace {

// Where a request goes, from its target alone.
struct Target {
  std::string_view path;
  std::string_view query;
  bool mcp = false;     // /mcp or a router dialect under /mcp/
  bool legacy = false;  // GET /sse, POST /messages
  bool probe = false;   // /health/live, /health/ready
  bool app = false;     // the mounted application's
};

Target target_of(std::string_view target, const HttpApp* app) {
  Target t;
  const auto question = target.find('?');
  t.path = target.substr(0, question);
  t.query = question == std::string_view::npos ? "" : target.substr(question + 1);
  t.mcp = t.path == "/mcp" || t.path.starts_with("/mcp/");
  t.legacy = t.path == "/sse" || t.path == "/messages";
  t.probe = t.path == "/health/live" || t.path == "/health/ready";
  t.app = app && !t.mcp && !t.legacy && app->handles(t.path);
  return t;
}

}  // namespace

bool Connection::admit(const Request& req) {
  if (shared_->stopping) {
    keep_alive_ = false;
    respond(http::status::service_unavailable,
            rpc_error_body(jsonrpc::kInternalError, "Service Unavailable: shutting down"));
    return false;
  }
  const auto& options = shared_->options;
  const Target t = target_of(req.target(), options.app.get());
  const std::string_view path = t.path;
  if (t.app) {
    route_ = options.app->metrics_label();
  } else if (path == "/health" || path == "/metrics" || t.probe) {
    route_ = t.probe ? "health" : path.substr(1);
  } else if (t.mcp) {
    route_ = path == "/mcp" ? "mcp" : "router";
  } else if (t.legacy) {
    route_ = "sse";
  } else if (!path.starts_with("/.well-known/")) {
    respond(http::status::not_found, R"({"error":"not found"})");
    return false;
  }

  // DNS rebinding: only local (or configured) Host and Origin values reach the server.
  const bool any_host = options.allowed_hosts.empty() && shared_->auth_on();
  if (!any_host && !host_allowed(req[http::field::host], options.allowed_hosts)) {
    respond(http::status::forbidden,
            rpc_error_body(jsonrpc::kInvalidRequest, "Forbidden: Host not allowed"));
    return false;
  }
  if (!origin_allowed(req[http::field::origin], options.allowed_origins)) {
    respond(http::status::forbidden,
            rpc_error_body(jsonrpc::kInvalidRequest, "Forbidden: Origin not allowed"));
    return false;
  }
  // Open to all: where a client learns how to get a token, and the probes. A liveness probe
  // carries no token: without one /health says only that the server is up.
  if (path.starts_with("/.well-known/") || t.probe || path == "/health") return true;
  return authorize(req);
}

void Connection::handle(Request req) {
  keep_alive_ = req.keep_alive();
  const Target t = target_of(req.target(), shared_->options.app.get());
  const std::string_view path = t.path;
  const auto verb = req.method();

  if (path.starts_with("/.well-known/")) {
    if (protected_resource_metadata(path, verb)) return;
    return respond(http::status::not_found, R"({"error":"not found"})");
  }
  if (t.probe) {
    if (verb != http::verb::get) return method_not_allowed("GET");
    if (path == "/health/live") return respond(http::status::ok, R"({"status":"ok"})");
    if (shared_->draining)
      return respond(http::status::service_unavailable, R"({"status":"draining"})");
    return respond(http::status::ok, R"({"status":"ready"})");
  }
  if (path == "/health") {
    if (verb != http::verb::get) return method_not_allowed("GET");
    return health(!shared_->auth_on() || authorized_quietly(req));
  }

  if (t.app) return serve_app(req, path);
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
  if (t.mcp) {
    if (verb != http::verb::post) return method_not_allowed("POST");
    return post_router(req, path.substr(5));
  }
  if (path == "/sse") {
    if (verb != http::verb::get) return method_not_allowed("GET");
    return get_legacy();
  }
  if (verb != http::verb::post) return method_not_allowed("POST");
  post_legacy(req, t.query);
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
