// The server's handler table and middleware chain, from its options. A new endpoint is a handler
// in its own file, registered here.
#include "transport/server/http/handlers.hpp"

#include "mcpclass/transport/server/http_app.hpp"
#include "transport/server/http/middleware.hpp"

namespace mcpclass::transport::server {

namespace http = boost::beast::http;

std::shared_ptr<const HttpFront> make_front(const HttpShared& shared) {
  const auto& options = shared.options;
  auto front = std::make_shared<HttpFront>();

  auto& mcp = front->route("/mcp", "mcp");
  if (!options.stateless) mcp.on(http::verb::get, mcp_get_handler());
  mcp.on(http::verb::post, mcp_post_handler());
  if (!options.stateless) mcp.on(http::verb::delete_, mcp_delete_handler());
  front->route("/sse", "sse").on(http::verb::get, legacy_sse_handler());
  front->route("/messages", "sse").on(http::verb::post, legacy_messages_handler());
  // Open: a liveness probe carries no token; without one /health says only that the server is up.
  front->route("/health", "health", Access::open).on(http::verb::get, health_handler());
  front->route("/health/live", "health", Access::open).on(http::verb::get, liveness_handler());
  front->route("/health/ready", "health", Access::open).on(http::verb::get, readiness_handler());
  front->route("/metrics", "metrics").on(http::verb::get, metrics_handler());
  front->prefix("/mcp/", "router").on(http::verb::post, router_handler());
  // Open: where a client learns how to get a token.
  front->prefix("/.well-known/", "other", Access::open).on(http::verb::unknown, metadata_handler());
  auto mount = [&front](const std::shared_ptr<HttpApp>& app) {
    front->mount([app](std::string_view path) { return app->handles(path); }, app->metrics_label())
        .on(http::verb::unknown, app_handler(app));
  };
  if (options.app) mount(options.app);
  for (const auto& app : options.apps) mount(app);

  front->use(refuse_while_stopping());
  front->use(require_route());
  front->use(guard_host_and_origin());
  front->use(require_token());
  return front;
}

}  // namespace mcpclass::transport::server
