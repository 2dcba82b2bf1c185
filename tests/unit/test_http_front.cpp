// The HTTP front's handler table: exact paths before prefixes before mounted apps, a handler per
// method (or one for every method), and the Allow header of a 405 in registration order.
#include "transport/server/http/front.hpp"

#include <doctest/doctest.h>

#include <memory>

using namespace mcpclass::transport::server;
namespace http = boost::beast::http;

namespace {
struct Nothing final : HttpHandler {
  void serve(Exchange&, Request&) override {}
};
}  // namespace

TEST_CASE("http front: routes by exact path, then prefix, then mount, handlers by method") {
  HttpFront front;
  auto get = std::make_shared<Nothing>();
  auto post = std::make_shared<Nothing>();
  auto any = std::make_shared<Nothing>();
  front.route("/mcp", "mcp").on(http::verb::get, get).on(http::verb::post, post);
  front.prefix("/mcp/", "router").on(http::verb::post, post);
  front.prefix("/.well-known/", "other", Access::open).on(http::verb::unknown, any);
  front.mount([](std::string_view p) { return p.starts_with("/v1"); }, "route")
      .on(http::verb::unknown, any);

  const HttpRoute* mcp = front.find("/mcp");
  REQUIRE(mcp);
  CHECK(mcp->label == "mcp");
  CHECK(mcp->access == Access::token);
  CHECK(mcp->handler(http::verb::get) == get.get());
  CHECK(mcp->handler(http::verb::post) == post.get());
  CHECK(mcp->handler(http::verb::delete_) == nullptr);
  CHECK(mcp->allow() == "GET, POST");

  REQUIRE(front.find("/mcp/tools/call"));
  CHECK(front.find("/mcp/tools/call")->label == "router");
  CHECK(front.find("/mcp/tools/call")->allow() == "POST");
  const HttpRoute* known = front.find("/.well-known/oauth-protected-resource");
  REQUIRE(known);
  CHECK(known->access == Access::open);
  CHECK(known->handler(http::verb::put) == any.get());
  REQUIRE(front.find("/v1/chat/completions"));
  CHECK(front.find("/v1/chat/completions")->label == "route");
  CHECK(front.find("/mcpx") == nullptr);
  CHECK(front.find("/") == nullptr);
}

TEST_CASE("http front: a target splits into path and query at the first '?'") {
  CHECK(split_target("/messages?sessionId=a&b=c") ==
        std::pair<std::string_view, std::string_view>{"/messages", "sessionId=a&b=c"});
  CHECK(split_target("/mcp") == std::pair<std::string_view, std::string_view>{"/mcp", ""});
  CHECK(split_target("/x?") == std::pair<std::string_view, std::string_view>{"/x", ""});
}
