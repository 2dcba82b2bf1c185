// The middleware that need no token: shutting down, the route, Host and Origin.
#include "transport/server/http/middleware.hpp"

#include "mcpclass/jsonrpc/message.hpp"
#include "transport/server/http/guard.hpp"
#include "transport/server/http/rpc_message.hpp"

namespace mcpclass::transport::server {

namespace http = boost::beast::http;

namespace {

class RefuseWhileStopping final : public HttpMiddleware {
 public:
  bool admit(Exchange& exchange, const Request&) override {
    if (!exchange.shared->stopping) return true;
    exchange.keep_alive = false;
    exchange.respond(http::status::service_unavailable,
                     rpc_error_body(jsonrpc::kInternalError, "Service Unavailable: shutting down"));
    return false;
  }
};

class RequireRoute final : public HttpMiddleware {
 public:
  bool admit(Exchange& exchange, const Request&) override {
    if (!exchange.target) {
      exchange.respond(http::status::not_found, R"({"error":"not found"})");
      return false;
    }
    exchange.route = exchange.target->label;
    return true;
  }
};

class GuardHostAndOrigin final : public HttpMiddleware {
 public:
  bool admit(Exchange& exchange, const Request& header) override {
    const auto& options = exchange.shared->options;
    // With a token required, any Host may reach the server unless hosts are configured.
    const bool any_host = options.allowed_hosts.empty() && exchange.shared->auth_on();
    if (!any_host && !host_allowed(header[http::field::host], options.allowed_hosts)) {
      exchange.respond(http::status::forbidden,
                       rpc_error_body(jsonrpc::kInvalidRequest, "Forbidden: Host not allowed"));
      return false;
    }
    if (!origin_allowed(header[http::field::origin], options.allowed_origins)) {
      exchange.respond(http::status::forbidden,
                       rpc_error_body(jsonrpc::kInvalidRequest, "Forbidden: Origin not allowed"));
      return false;
    }
    return true;
  }
};

}  // namespace

std::shared_ptr<HttpMiddleware> refuse_while_stopping() {
  return std::make_shared<RefuseWhileStopping>();
}
std::shared_ptr<HttpMiddleware> require_route() {
  return std::make_shared<RequireRoute>();
}
std::shared_ptr<HttpMiddleware> guard_host_and_origin() {
  return std::make_shared<GuardHostAndOrigin>();
}

}  // namespace mcpclass::transport::server
