// Streamable HTTP, DELETE /mcp: ends the session Mcp-Session-Id names.
#include "transport/server/http/handlers.hpp"
#include "transport/server/http/mcp_common.hpp"

namespace mcpclass::transport::server {

namespace http = boost::beast::http;

namespace {

class McpDelete final : public HttpHandler {
 public:
  void serve(Exchange& exchange, Request& req) override {
    const std::string_view id = req[kSessionHeader];
    auto entry = find_session(exchange, id);
    if (!entry) return;
    entry->end();
    exchange.shared->sessions->remove(std::string(id));
    exchange.respond(http::status::ok, {});
  }
};

}  // namespace

std::shared_ptr<HttpHandler> mcp_delete_handler() {
  return std::make_shared<McpDelete>();
}

}  // namespace mcpclass::transport::server
