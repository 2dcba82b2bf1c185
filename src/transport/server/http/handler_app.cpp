// A mounted application (HttpServerOptions::app, e.g. the routing proxy): hands it the request,
// then writes what its AppResponse sends, whole or as chunks, while a read watches for the client
// leaving (which cancels the app's work) and keeps what a pipelined request sends for after.
#include "mcpclass/transport/server/http_app.hpp"
#include "transport/server/http/app_response.hpp"
#include "transport/server/http/connection.hpp"
#include "transport/server/http/handlers.hpp"
#include "transport/server/http/middleware.hpp"

#include <boost/json.hpp>

namespace mcpclass::transport::server {

namespace {

class App final : public HttpHandler {
 public:
  explicit App(std::shared_ptr<HttpApp> app) : app_(std::move(app)) {}

  void serve(Exchange& exchange, Request& req) override {
    if (const std::string tool = app_->scope_tool(exchange.path); !tool.empty()) {
      const boost::json::value call = boost::json::object{
          {"method", "tools/call"}, {"params", boost::json::object{{"name", tool}}}};
      if (!scopes_allow(exchange, call)) return;  // answered 403
    }
    HttpAppRequest request;
    request.method = std::string(req.method_string());
    request.target = std::string(req.target());
    request.path = std::string(exchange.path);
    for (const auto& field : req)
      request.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
    request.body = std::move(req.body());
    request.client_address = exchange.peer.to_string();
    if (const auto connection = exchange.connection())
      request.io_context = connection->io_context();

    exchange.guard.emplace(*exchange.shared, nullptr);  // in flight: stop() waits for it
    auto response = std::make_shared<AppResponse>(exchange.weak_from_this());
    exchange.on_release([response] { response->cancel(); });
    exchange.watch_client(true);
    app_->handle(std::move(request), std::move(response));
  }

  std::string too_large_body(std::string_view message) const override {
    return app_->too_large_body(message);
  }

 private:
  const std::shared_ptr<HttpApp> app_;
};

}  // namespace

std::shared_ptr<HttpHandler> app_handler(std::shared_ptr<HttpApp> app) {
  return std::make_shared<App>(std::move(app));
}

}  // namespace mcpclass::transport::server
