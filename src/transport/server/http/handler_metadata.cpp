// /.well-known/*: the OAuth protected resource metadata (RFC 9728) that tells a client where to
// get a token, at /.well-known/oauth-protected-resource and at the path naming this resource;
// open to all. Other /.well-known/ paths are 404.
#include "transport/server/http/handlers.hpp"
#include "transport/server/jwt/validator.hpp"

namespace mcpclass::transport::server {

namespace http = boost::beast::http;

namespace {

class Metadata final : public HttpHandler {
 public:
  void serve(Exchange& exchange, Request& req) override {
    const auto& jwt = exchange.shared->jwt;
    constexpr std::string_view kRoot = "/.well-known/oauth-protected-resource";
    if (!jwt || (exchange.path != jwt->metadata_path() && exchange.path != kRoot))
      return exchange.respond(http::status::not_found, R"({"error":"not found"})");
    exchange.route = "metadata";
    if (req.method() != http::verb::get) return exchange.method_not_allowed("GET");
    exchange.respond(http::status::ok, jwt->metadata_json(), "application/json",
                     {{"Cache-Control", "max-age=3600"}});
  }
};

}  // namespace

std::shared_ptr<HttpHandler> metadata_handler() {
  return std::make_shared<Metadata>();
}

}  // namespace mcpclass::transport::server
