// HTTP/1.1 pipelining on the MCP endpoints (issue 28): a request sent on a connection while a slow
// tool still runs for the one before it is answered after it, in order, on the same connection.
#include "mcpclass/server/server.hpp"
#include "mcpclass/server/tool.hpp"
#include "mcpclass/transport/server/http_server.hpp"
#include "mcpclass/util/executor.hpp"

#include <doctest/doctest.h>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>

namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace json = boost::json;
using tcp = net::ip::tcp;
using namespace std::chrono_literals;
using namespace mcpclass;

// A server whose "slow" tool holds its call until the test lets it go.
struct SlowToolServer {
  explicit SlowToolServer(transport::server::HttpServerOptions options) {
    server = server::Server::create({}, pool.executor());
    server::Tool slow;
    slow.name = "slow";
    slow.description = "Answers once released";
    slow.input_schema = json::parse(R"({"type":"object"})").as_object();
    slow.handler = [this](const json::object&, server::RequestContext& ctx) {
      started = true;
      while (!released) ctx.sleep_for(5ms);
      return server::ToolResult::text("slow done");
    };
    server->add_tool(slow);
    server::Tool echo;
    echo.name = "echo";
    echo.description = "Echoes text";
    echo.input_schema = json::parse(R"({"type":"object"})").as_object();
    echo.handler = [](const json::object& args, server::RequestContext&) {
      return server::ToolResult::text(std::string(args.at("text").as_string()));
    };
    server->add_tool(echo);
    http = std::make_unique<transport::server::HttpServer>(server, std::move(options));
    http->start();
  }
  ~SlowToolServer() {
    released = true;
    http->stop();
  }

  util::ThreadPool pool{2};
  std::shared_ptr<server::Server> server;
  std::unique_ptr<transport::server::HttpServer> http;
  std::atomic<bool> started{false};
  std::atomic<bool> released{false};
};

// A tools/call of `tool` as a request to `path`: the router dialect's body for /mcp/tools/call,
// a JSON-RPC request for /mcp.
std::string call(unsigned short port, const std::string& path, const std::string& tool,
                 const std::string& text) {
  const std::string params = R"({"name":")" + tool + R"(","arguments":{"text":")" + text + "\"}}";
  const std::string body =
      path == "/mcp" ? R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":)" + params + "}"
                     : params;
  return "POST " + path + " HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) +
         "\r\nContent-Type: application/json\r\nAccept: application/json\r\nContent-Length: " +
         std::to_string(body.size()) + "\r\n\r\n" + body;
}

// The text of a tool result, from either dialect's answer.
std::string result_text(const std::string& body) {
  const json::value answer = json::parse(body);
  const json::value& result = answer.as_object().contains("result") ? answer.at("result") : answer;
  return std::string(result.at("content").at(0).at("text").as_string());
}

}  // namespace

TEST_CASE("http pipelining: a request sent while a slow tool runs is answered after it") {
  for (const std::string path : {"/mcp/tools/call", "/mcp"}) {
    CAPTURE(path);
    transport::server::HttpServerOptions options;
    options.stateless = true;
    SlowToolServer s(options);
    const unsigned short port = s.http->port();

    net::io_context ioc;
    tcp::socket socket(ioc);
    socket.connect({net::ip::make_address("127.0.0.1"), port});
    net::write(socket, net::buffer(call(port, path, "slow", "")));
    for (int i = 0; i < 1000 && !s.started; ++i) std::this_thread::sleep_for(5ms);
    REQUIRE(s.started);
    net::write(socket, net::buffer(call(port, path, "echo", "second")));
    std::this_thread::sleep_for(100ms);  // the second request reaches the server first
    s.released = true;

    beast::flat_buffer buffer;
    http::response<http::string_body> first;
    http::response<http::string_body> second;
    boost::system::error_code ec;
    http::read(socket, buffer, first, ec);
    REQUIRE_FALSE(ec);
    http::read(socket, buffer, second, ec);
    REQUIRE_FALSE(ec);
    CHECK(first.result_int() == 200);
    CHECK(result_text(first.body()) == "slow done");
    CHECK(second.result_int() == 200);
    CHECK(result_text(second.body()) == "second");
  }
}
