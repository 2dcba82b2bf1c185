// The HTTP transport against real sockets on 127.0.0.1 (ephemeral ports): Streamable HTTP with
// sessions and stateless, SSE responses and replay, limits and guards, the router dialects,
// legacy HTTP+SSE, /health and /metrics.
#include "mcpclass/server/server.hpp"
#include "mcpclass/server/tool.hpp"
#include "mcpclass/transport/server/http_server.hpp"
#include "mcpclass/util/executor.hpp"
#include "mcpclass/util/trace_context.hpp"

#include <doctest/doctest.h>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>

#include <atomic>
#include <chrono>
#include <future>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace json = boost::json;
using tcp = net::ip::tcp;
using namespace mcpclass;

using Headers = std::vector<std::pair<std::string, std::string>>;

struct Reply {
  unsigned status = 0;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;

  std::string header(const std::string& name) const {
    auto it = headers.find(name);
    return it == headers.end() ? std::string() : it->second;
  }
  json::value json_body() const { return json::parse(body); }
};

const Headers kJsonPost = {{"Content-Type", "application/json"},
                           {"Accept", "application/json, text/event-stream"}};

Headers with(Headers base, Headers extra) {
  for (auto& h : extra) base.push_back(std::move(h));
  return base;
}

// One request on a fresh connection; reads the whole response (SSE responses that end too).
Reply call(unsigned short port, http::verb verb, const std::string& target, std::string body = {},
           const Headers& headers = kJsonPost) {
  net::io_context ioc;
  tcp::socket socket(ioc);
  socket.connect({net::ip::make_address("127.0.0.1"), port});
  http::request<http::string_body> req{verb, target, 11};
  req.set(http::field::host, "127.0.0.1:" + std::to_string(port));
  for (const auto& [name, value] : headers) req.set(name, value);
  req.body() = std::move(body);
  req.prepare_payload();
  http::write(socket, req);
  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(boost::none);
  http::read(socket, buffer, parser);
  Reply reply;
  reply.status = parser.get().result_int();
  for (const auto& field : parser.get()) {
    std::string name(field.name_string());
    for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    reply.headers[name] = std::string(field.value());
  }
  reply.body = parser.get().body();
  return reply;
}

Reply post(unsigned short port, const std::string& target, const json::value& body,
           const Headers& headers = kJsonPost) {
  return call(port, http::verb::post, target, json::serialize(body), headers);
}

// The JSON-RPC messages of an SSE body, in order.
std::vector<json::value> sse_messages(const std::string& body) {
  std::vector<json::value> out;
  std::size_t pos = 0;
  while ((pos = body.find("data: ", pos)) != std::string::npos) {
    const std::size_t end = body.find('\n', pos);
    const std::string data = body.substr(pos + 6, end - pos - 6);
    if (!data.empty()) out.push_back(json::parse(data));
    pos = end;
  }
  return out;
}

json::object initialize_request(std::string version = "2025-11-25") {
  return {{"jsonrpc", "2.0"},
          {"id", 1},
          {"method", "initialize"},
          {"params",
           {{"protocolVersion", version},
            {"capabilities", json::object{}},
            {"clientInfo", {{"name", "test"}, {"version", "1"}}}}}};
}

json::object request(std::int64_t id, std::string method, json::object params = {}) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", std::move(params)}};
}

// A server with a few tools behind an HttpServer.
struct TestServer {
  explicit TestServer(transport::server::HttpServerOptions options = {},
                      server::ServerOptions server_options = {}) {
    server = server::Server::create(std::move(server_options), pool.executor());
    server::Tool echo;
    echo.name = "echo";
    echo.description = "Echoes text";
    echo.input_schema = json::parse(
                            R"({"type":"object","properties":{"text":{"type":"string"}},
                                "required":["text"]})")
                            .as_object();
    echo.handler = [](const json::object& args, server::RequestContext&) {
      return server::ToolResult::text(std::string(args.at("text").as_string()));
    };
    server->add_tool(echo);
    server::Tool progress;
    progress.name = "progress";
    progress.description = "Reports progress three times";
    progress.handler = [](const json::object&, server::RequestContext& ctx) {
      for (int i = 0; i < 3; ++i) {
        ctx.progress(i * 50, 100);
        ctx.sleep_for(std::chrono::milliseconds(10));
      }
      return server::ToolResult::text("done");
    };
    server->add_tool(progress);
    server::Tool slow;
    slow.name = "slow";
    slow.description = "Takes 300 ms";
    slow.handler = [](const json::object&, server::RequestContext& ctx) {
      ctx.sleep_for(std::chrono::milliseconds(300));
      return server::ToolResult::text("slept");
    };
    server->add_tool(slow);
    server::Tool block;
    block.name = "block";
    block.description = "Runs until it is cancelled";
    block.handler = [this](const json::object&, server::RequestContext& ctx) {
      blocked.fetch_add(1);
      ctx.sleep_for(std::chrono::minutes(5));
      return server::ToolResult::error("cancelled");
    };
    server->add_tool(block);
    server::Tool trace;
    trace.name = "trace";
    trace.description = "Says the trace context the engine handed it";
    trace.handler = [](const json::object&, server::RequestContext& ctx) {
      const auto& parent = ctx.trace_parent();
      if (!parent) return server::ToolResult::text("none");
      return server::ToolResult::text(
          util::hex_of(parent->trace_id.data(), parent->trace_id.size()) + "-" +
          util::hex_of(parent->parent_id.data(), parent->parent_id.size()) + "-" +
          parent->tracestate);
    };
    server->add_tool(trace);
    http = std::make_unique<transport::server::HttpServer>(server, std::move(options), [] {
      return json::object{{"categories", json::array{"math", "general"}},
                          {"model", "openai/gpt-oss-20b"},
                          {"index_size", 0}};
    });
    http->start();
    port = http->port();
  }
  ~TestServer() { http->stop(); }

  // initialize + notifications/initialized; returns the session id.
  std::string open_session(std::string version = "2025-11-25") {
    Reply init = post(port, "/mcp", initialize_request(version));
    REQUIRE(init.status == 200);
    const std::string id = init.header("mcp-session-id");
    REQUIRE(!id.empty());
    Reply ack = post(port, "/mcp",
                     json::object{{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}},
                     with(kJsonPost, {{"Mcp-Session-Id", id}}));
    REQUIRE(ack.status == 202);
    return id;
  }

  /// Waits (5 s at most) until `calls` calls of the block tool are running.
  bool wait_blocked(int calls) {
    for (int i = 0; i < 500 && blocked.load() < calls; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return blocked.load() == calls;
  }

  util::ThreadPool pool{2};
  std::atomic<int> blocked{0};  // calls of the block tool so far
  std::shared_ptr<server::Server> server;
  std::unique_ptr<transport::server::HttpServer> http;
  unsigned short port = 0;
};

}  // namespace

TEST_CASE("http: initialize, session id, tools/list, DELETE") {
  TestServer t;
  CHECK(t.port != 0);
  const std::string sid = t.open_session();
  const Headers session = with(kJsonPost, {{"Mcp-Session-Id", sid}});

  Reply list = post(t.port, "/mcp", request(2, "tools/list"), session);
  CHECK(list.status == 200);
  CHECK(list.header("content-type") == "application/json");
  const json::value listed = list.json_body();
  CHECK(listed.at("result").at("tools").as_array().size() == 5);

  // Any supported MCP-Protocol-Version is accepted, an unknown one is not.
  CHECK(post(t.port, "/mcp", request(3, "ping"),
             with(session, {{"MCP-Protocol-Version", "2025-03-26"}}))
            .status == 200);
  CHECK(post(t.port, "/mcp", request(4, "ping"),
             with(session, {{"MCP-Protocol-Version", "1999-01-01"}}))
            .status == 400);

  CHECK(call(t.port, http::verb::delete_, "/mcp", {}, session).status == 200);
  CHECK(post(t.port, "/mcp", request(5, "tools/list"), session).status == 404);
}

TEST_CASE("http: missing session 400, unknown session 404, notifications 202") {
  TestServer t;
  CHECK(post(t.port, "/mcp", request(1, "tools/list")).status == 400);
  CHECK(
      post(t.port, "/mcp", request(1, "tools/list"), with(kJsonPost, {{"Mcp-Session-Id", "nope"}}))
          .status == 404);
  const std::string sid = t.open_session();
  Reply r = post(t.port, "/mcp",
                 json::object{{"jsonrpc", "2.0"},
                              {"method", "notifications/cancelled"},
                              {"params", {{"requestId", 99}}}},
                 with(kJsonPost, {{"Mcp-Session-Id", sid}}));
  CHECK(r.status == 202);
  CHECK(r.body.empty());
}

TEST_CASE("http: a call cancelled on a POST that takes only SSE ends its stream, no answer") {
  transport::server::HttpServerOptions options;
  options.shutdown_timeout = std::chrono::milliseconds(300);
  TestServer t(options);
  const std::string sid = t.open_session();
  const Headers sse_only = {{"Content-Type", "application/json"},
                            {"Accept", "text/event-stream"},
                            {"Mcp-Session-Id", sid}};
  auto answer = std::async(std::launch::async, [&] {
    return post(t.port, "/mcp", request(2, "tools/call", {{"name", "block"}}), sse_only);
  });
  REQUIRE(t.wait_blocked(1));
  CHECK(post(t.port, "/mcp",
             json::object{{"jsonrpc", "2.0"},
                          {"method", "notifications/cancelled"},
                          {"params", {{"requestId", 2}}}},
             with(kJsonPost, {{"Mcp-Session-Id", sid}}))
            .status == 202);
  const bool ended = answer.wait_for(std::chrono::seconds(10)) == std::future_status::ready;
  if (!ended) t.http->stop();  // closes the connection: the test fails instead of hanging
  REQUIRE(ended);
  const Reply r = answer.get();
  CHECK(r.status == 200);
  CHECK(r.header("content-type") == "text/event-stream");
  CHECK(sse_messages(r.body).empty());  // a cancelled request gets no response
}

TEST_CASE("http: a tool that reports progress answers with an SSE stream, replayable") {
  TestServer t;
  const std::string sid = t.open_session();
  const Headers session = with(kJsonPost, {{"Mcp-Session-Id", sid}});
  json::object params{
      {"name", "progress"}, {"arguments", json::object{}}, {"_meta", {{"progressToken", "tok"}}}};
  Reply r = post(t.port, "/mcp", request(7, "tools/call", params), session);
  CHECK(r.status == 200);
  CHECK(r.header("content-type") == "text/event-stream");
  CHECK(r.body.find("retry: ") != std::string::npos);
  auto messages = sse_messages(r.body);
  REQUIRE(messages.size() == 4);
  for (int i = 0; i < 3; ++i) {
    CHECK(messages[i].at("method") == "notifications/progress");
    CHECK(messages[i].at("params").at("progressToken") == "tok");
  }
  CHECK(messages[3].at("id") == 7);
  CHECK(messages[3].at("result").at("content").at(0).at("text") == "done");

  // The priming event names the stream; a GET with Last-Event-ID replays what followed it.
  const auto id_pos = r.body.find("id: ");
  REQUIRE(id_pos != std::string::npos);
  const std::string first_id = r.body.substr(id_pos + 4, r.body.find('\n', id_pos) - id_pos - 4);
  Reply replay =
      call(t.port, http::verb::get, "/mcp", {},
           {{"Accept", "text/event-stream"}, {"Mcp-Session-Id", sid}, {"Last-Event-ID", first_id}});
  CHECK(replay.status == 200);
  auto again = sse_messages(replay.body);
  REQUIRE(again.size() == 4);
  CHECK(again[3].at("id") == 7);

  // Without text/event-stream in Accept the answer is plain JSON.
  Reply plain = post(t.port, "/mcp", request(8, "tools/call", params),
                     {{"Content-Type", "application/json"},
                      {"Accept", "application/json"},
                      {"Mcp-Session-Id", sid}});
  CHECK(plain.status == 200);
  CHECK(plain.json_body().at("id") == 8);
}

TEST_CASE("http: a client that accepts only text/event-stream gets every answer as SSE") {
  TestServer t;
  const std::string sid = t.open_session();
  const Headers sse_only = {{"Content-Type", "application/json"},
                            {"Accept", "text/event-stream"},
                            {"Mcp-Session-Id", sid}};
  json::object args{{"name", "echo"}, {"arguments", json::object{{"text", "hi"}}}};
  Reply r = post(t.port, "/mcp", request(4, "tools/call", args), sse_only);
  CHECK(r.status == 200);
  CHECK(r.header("content-type") == "text/event-stream");
  auto messages = sse_messages(r.body);
  REQUIRE(messages.size() == 1);
  CHECK(messages[0].at("id") == 4);
  CHECK(messages[0].at("result").at("content").at(0).at("text") == "hi");
  // Errors too; notifications still get 202 and no stream.
  r = post(t.port, "/mcp", request(5, "no/such/method"), sse_only);
  CHECK(r.header("content-type") == "text/event-stream");
  messages = sse_messages(r.body);
  REQUIRE(messages.size() == 1);
  CHECK(messages[0].at("error").at("code") == -32601);
  r = post(t.port, "/mcp",
           json::object{{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}}, sse_only);
  CHECK(r.status == 202);
  // Both listed: a lone answer stays JSON.
  r = post(t.port, "/mcp", request(6, "tools/call", args),
           with(kJsonPost, {{"Mcp-Session-Id", sid}}));
  CHECK(r.header("content-type") == "application/json");
}

TEST_CASE("http: Host and Origin allow-list") {
  TestServer t;
  CHECK(post(t.port, "/mcp", initialize_request(), with(kJsonPost, {{"Host", "evil.example.com"}}))
            .status == 403);
  CHECK(post(t.port, "/mcp", initialize_request(),
             with(kJsonPost, {{"Origin", "http://evil.example.com"}}))
            .status == 403);
  CHECK(post(t.port, "/mcp", initialize_request(),
             with(kJsonPost, {{"Host", "localhost:" + std::to_string(t.port)},
                              {"Origin", "http://localhost:" + std::to_string(t.port)}}))
            .status == 200);
}

TEST_CASE("http: limits and malformed input") {
  transport::server::HttpServerOptions options;
  options.max_body_bytes = 1024;
  TestServer t(options);
  Reply big = call(t.port, http::verb::post, "/mcp", std::string(10'000, ' '));
  CHECK(big.status == 413);

  Reply bad = call(t.port, http::verb::post, "/mcp", "{not json");
  CHECK(bad.status == 400);
  CHECK(bad.json_body().at("error").at("code") == -32700);

  Reply type = call(t.port, http::verb::post, "/mcp", json::serialize(initialize_request()),
                    {{"Content-Type", "text/plain"}});
  CHECK(type.status == 415);

  CHECK(call(t.port, http::verb::get, "/nowhere", {}, {}).status == 404);
  CHECK(call(t.port, http::verb::put, "/mcp", {}, {}).status == 405);
}

TEST_CASE("http: bearer token") {
  transport::server::HttpServerOptions options;
  options.bearer_tokens = {"s3cret"};
  TestServer t(options);
  Reply none = post(t.port, "/mcp", initialize_request());
  CHECK(none.status == 401);
  CHECK(none.header("www-authenticate").starts_with("Bearer"));
  Reply wrong = post(t.port, "/mcp", initialize_request(),
                     with(kJsonPost, {{"Authorization", "Bearer nope"}}));
  CHECK(wrong.status == 401);
  CHECK(wrong.header("www-authenticate").find("invalid_token") != std::string::npos);
  CHECK(post(t.port, "/mcp", initialize_request(),
             with(kJsonPost, {{"Authorization", "Bearer s3cret"}}))
            .status == 200);
  CHECK(call(t.port, http::verb::get, "/health", {}, {}).status == 200);
  CHECK(call(t.port, http::verb::get, "/metrics", {}, {}).status == 401);
}

TEST_CASE(
    "http: several bearer tokens, and with tokens any Host is served unless hosts are listed") {
  transport::server::HttpServerOptions options;
  options.bearer_tokens = {"first-token", "second-token"};
  {
    TestServer t(options);
    for (const char* token : {"first-token", "second-token"}) {
      CHECK(post(t.port, "/mcp", initialize_request(),
                 with(kJsonPost, {{"Authorization", std::string("Bearer ") + token},
                                  {"Host", "mcp.example.com"}}))
                .status == 200);
    }
    CHECK(post(t.port, "/mcp", initialize_request(),
               with(kJsonPost, {{"Authorization", "Bearer first"}, {"Host", "mcp.example.com"}}))
              .status == 401);
  }
  options.allowed_hosts = {"mcp.example.com"};
  TestServer listed(options);
  const Headers token = {{"Authorization", "Bearer first-token"}};
  CHECK(post(listed.port, "/mcp", initialize_request(),
             with(with(kJsonPost, token), {{"Host", "mcp.example.com:443"}}))
            .status == 200);
  CHECK(post(listed.port, "/mcp", initialize_request(),
             with(with(kJsonPost, token), {{"Host", "other.example"}}))
            .status == 403);
}

TEST_CASE("http: a non-loopback address needs tokens or allow_unauthenticated") {
  util::ThreadPool pool{1};
  auto server = server::Server::create({}, pool.executor());
  transport::server::HttpServerOptions options;
  options.host = "0.0.0.0";
  {
    transport::server::HttpServer http(server, options);
    CHECK_THROWS_WITH(http.start(), doctest::Contains("allow_unauthenticated"));
  }
  options.allow_unauthenticated = true;
  {
    transport::server::HttpServer http(server, options);
    CHECK_NOTHROW(http.start());
  }
  options.allow_unauthenticated = false;
  options.bearer_tokens = {"t"};
  transport::server::HttpServer http(server, options);
  CHECK_NOTHROW(http.start());
  CHECK(http.port() != 0);
}

TEST_CASE("http: /health passes the Host and Origin guards, without the token it only says ok") {
  {
    TestServer t;
    CHECK(call(t.port, http::verb::get, "/health", {}, {{"Host", "evil.example"}}).status == 403);
    CHECK(
        call(t.port, http::verb::get, "/health", {}, {{"Origin", "http://evil.example"}}).status ==
        403);
    CHECK(call(t.port, http::verb::get, "/metrics", {}, {{"Host", "evil.example"}}).status == 403);
  }
  transport::server::HttpServerOptions options;
  options.bearer_tokens = {"s3cret"};
  TestServer t(options);
  Reply anonymous = call(t.port, http::verb::get, "/health", {}, {});
  REQUIRE(anonymous.status == 200);
  CHECK(anonymous.json_body() == json::object{{"status", "ok"}});
  Reply known = call(t.port, http::verb::get, "/health", {}, {{"Authorization", "Bearer s3cret"}});
  REQUIRE(known.status == 200);
  CHECK(known.json_body().as_object().at("model") == "openai/gpt-oss-20b");
}

TEST_CASE("http: the router dialect parses within the server's JSON limits") {
  server::ServerOptions server_options;
  server_options.limits.max_depth = 8;
  TestServer t({}, server_options);
  json::value deep = json::object{{"text", "x"}};
  for (int i = 0; i < 12; ++i) deep = json::object{{"nested", deep}};
  Reply r = post(
      t.port, "/mcp/tools/call",
      json::object{{"name", "echo"}, {"arguments", json::object{{"text", "hi"}, {"extra", deep}}}});
  CHECK(r.status == 400);
  CHECK(r.body.find("nesting deeper than 8 levels") != std::string::npos);
  // Within the limits the same route answers.
  Reply ok = post(t.port, "/mcp/tools/call",
                  json::object{{"name", "echo"}, {"arguments", json::object{{"text", "hi"}}}});
  CHECK(ok.status == 200);
}

TEST_CASE("http: metrics count methods the engine does not answer under one short label") {
  TestServer t;
  const std::string id = t.open_session();
  for (int i = 0; i < 3; ++i) {
    const std::string method = "unknown/" + std::to_string(i) + std::string(64 * 1024, 'm');
    Reply r =
        post(t.port, "/mcp", request(10 + i, method), with(kJsonPost, {{"Mcp-Session-Id", id}}));
    CHECK(r.status == 200);
    CHECK(r.body.size() < 1024);  // the error quotes 128 bytes of the name, not 64 KiB
  }
  CHECK(post(t.port, "/mcp/" + std::string(4 * 1024, 'r'), json::object{}).status == 404);
  Reply metrics = call(t.port, http::verb::get, "/metrics", {}, {});
  REQUIRE(metrics.status == 200);
  CHECK(metrics.body.size() < 16 * 1024);
  CHECK(metrics.body.find("mcpclass_rpc_requests_total{method=\"other\"} 4") != std::string::npos);
  CHECK(metrics.body.find("mmmmmmmm") == std::string::npos);
  CHECK(metrics.body.find("mcpclass_rpc_requests_total{method=\"initialize\"} 1") !=
        std::string::npos);
}

TEST_CASE("http: router dialect transcript (reference.md section 2)") {
  TestServer t;
  // The Go router: POST <url>/<method>, {"method":"","params":{..}}, bare result back.
  Reply init = post(t.port, "/mcp/initialize",
                    json::parse(R"({"method":"","params":{"protocolVersion":"2024-11-05",
                      "capabilities":{},"clientInfo":{"name":"semantic-router","version":"1"}}})"));
  CHECK(init.status == 200);
  CHECK(init.json_body().at("protocolVersion") == "2024-11-05");
  CHECK(!init.json_body().as_object().contains("jsonrpc"));

  Reply list = post(t.port, "/mcp/tools/list", json::parse(R"({"method":"","params":{}})"));
  CHECK(list.status == 200);
  CHECK(list.json_body().at("tools").as_array().size() == 5);

  Reply ping = call(t.port, http::verb::post, "/mcp/ping", {}, {});
  CHECK(ping.status == 200);
  CHECK(ping.json_body() == json::object{});

  Reply tool =
      post(t.port, "/mcp/tools/call",
           json::parse(R"({"method":"","params":{"name":"echo","arguments":{"text":"a"}}})"));
  CHECK(tool.status == 200);
  CHECK(tool.json_body().at("content").at(0).at("text") == "a");

  // Simple style: {name, arguments} on /mcp/tools/call.
  Reply simple =
      post(t.port, "/mcp/tools/call", json::parse(R"({"name":"echo","arguments":{"text":"hi"}})"));
  CHECK(simple.status == 200);
  CHECK(simple.json_body() ==
        json::parse(R"({"content":[{"type":"text","text":"hi"}],"isError":false})"));

  // Bare params, and lists the router tolerates failing.
  CHECK(post(t.port, "/mcp/resources/list", json::object{}).status == 200);
  CHECK(call(t.port, http::verb::post, "/mcp/prompts/list", {}, {}).status == 200);
  Reply unknown = call(t.port, http::verb::post, "/mcp/no/such", {}, {});
  CHECK(unknown.status == 404);
  CHECK(unknown.json_body().at("error").at("code") == -32601);
  Reply bad = call(t.port, http::verb::post, "/mcp/tools/call", "{oops", {});
  CHECK(bad.status == 400);
}

TEST_CASE("http: /health and /metrics") {
  TestServer t;
  Reply health = call(t.port, http::verb::get, "/health", {}, {});
  CHECK(health.status == 200);
  const auto h = health.json_body().as_object();
  CHECK(h.at("status") == "ok");
  CHECK(h.at("categories").as_array().size() == 2);
  CHECK(h.at("model") == "openai/gpt-oss-20b");
  CHECK(h.at("tools") == 5);
  CHECK(h.contains("uptime_seconds"));
  t.open_session();
  Reply metrics = call(t.port, http::verb::get, "/metrics", {}, {});
  CHECK(metrics.status == 200);
  CHECK(metrics.body.find("mcpclass_http_requests_total{route=\"mcp\",code=\"200\"}") !=
        std::string::npos);
  CHECK(metrics.body.find("mcpclass_active_sessions 1") != std::string::npos);
  CHECK(metrics.body.find("mcpclass_http_request_duration_seconds_bucket") != std::string::npos);
}

TEST_CASE("http: legacy HTTP+SSE endpoint event and POST /messages round trip") {
  TestServer t;
  net::io_context ioc;
  tcp::socket sse(ioc);
  sse.connect({net::ip::make_address("127.0.0.1"), t.port});
  const std::string get =
      "GET /sse HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n";
  net::write(sse, net::buffer(get));
  std::string received;
  auto read_until = [&](const std::string& needle) {
    char buf[4096];
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (received.find(needle) == std::string::npos &&
           std::chrono::steady_clock::now() < deadline) {
      const std::size_t n = sse.read_some(net::buffer(buf));
      received.append(buf, n);
    }
    return received.find(needle) != std::string::npos;
  };
  REQUIRE(read_until("event: endpoint"));
  REQUIRE(read_until("\n\n"));
  const auto pos = received.find("/messages?sessionId=");
  REQUIRE(pos != std::string::npos);
  const std::string endpoint = received.substr(pos, received.find('\n', pos) - pos);

  Reply accepted = post(t.port, endpoint, initialize_request("2024-11-05"));
  CHECK(accepted.status == 202);
  REQUIRE(read_until("\"protocolVersion\":\"2024-11-05\""));
  post(t.port, endpoint, json::object{{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}});
  CHECK(post(t.port, endpoint, request(2, "tools/list")).status == 202);
  REQUIRE(read_until("\"echo\""));
  CHECK(post(t.port, "/messages?sessionId=unknown", request(3, "ping")).status == 404);
}

TEST_CASE("http: a tool gets the trace context of its request's _meta, else of its headers") {
  TestServer t;
  const std::string sid = t.open_session();
  const Headers session = with(kJsonPost, {{"Mcp-Session-Id", sid}});
  const std::string header_trace = "4bf92f3577b34da6a3ce929d0e0e4736";
  const std::string meta_trace = "0af7651916cd43dd8448eb211c80319c";
  const std::string header_value = "00-" + header_trace + "-00f067aa0ba902b7-01";
  const std::string meta_value = "00-" + meta_trace + "-b7ad6b7169203331-01";
  std::int64_t id = 10;
  // What the trace tool says for a call with `meta` in its params and `headers` on the POST.
  const auto traced = [&](json::object meta, const Headers& headers) {
    json::object params{{"name", "trace"}, {"arguments", json::object{}}};
    if (!meta.empty()) params["_meta"] = std::move(meta);
    Reply r = post(t.port, "/mcp", request(++id, "tools/call", std::move(params)),
                   with(session, headers));
    REQUIRE(r.status == 200);
    return std::string(r.json_body().at("result").at("content").at(0).at("text").as_string());
  };
  CHECK(traced({}, {}) == "none");
  // The headers alone (Streamable HTTP).
  CHECK(traced({}, {{"traceparent", header_value}, {"tracestate", "h=1"}}) ==
        header_trace + "-00f067aa0ba902b7-h=1");
  // `_meta` alone (MCP 2026-07-28, SEP-414: what stdio carries too).
  CHECK(traced({{"traceparent", meta_value}, {"tracestate", "m=2"}}, {}) ==
        meta_trace + "-b7ad6b7169203331-m=2");
  // Both: `_meta` wins, and the header's tracestate does not join its traceparent.
  CHECK(traced({{"traceparent", meta_value}},
               {{"traceparent", header_value}, {"tracestate", "h=1"}}) ==
        meta_trace + "-b7ad6b7169203331-");
  // Malformed is no trace context, never an error; a malformed `_meta` still wins.
  CHECK(traced({{"traceparent", "00-" + meta_trace + "-b7ad6b7169203331"}}, {}) == "none");
  CHECK(traced({{"traceparent", 7}}, {}) == "none");
  CHECK(traced({{"traceparent", "garbage"}}, {{"traceparent", header_value}}) == "none");
  CHECK(traced({}, {{"traceparent", "00-" + header_trace + "-0000000000000000-01"}}) == "none");

  // The router dialect reads the headers too.
  Reply routed = post(t.port, "/mcp/tools/call", json::parse(R"({"name":"trace","arguments":{}})"),
                      with(kJsonPost, {{"traceparent", header_value}}));
  REQUIRE(routed.status == 200);
  CHECK(std::string(routed.json_body().at("content").at(0).at("text").as_string()) ==
        header_trace + "-00f067aa0ba902b7-");
}

TEST_CASE("http: stateless mode") {
  transport::server::HttpServerOptions options;
  options.stateless = true;
  TestServer t(options);
  Reply init = post(t.port, "/mcp", initialize_request());
  CHECK(init.status == 200);
  CHECK(init.header("mcp-session-id").empty());
  Reply list = post(t.port, "/mcp", request(2, "tools/list"));
  CHECK(list.status == 200);
  CHECK(list.json_body().at("result").at("tools").as_array().size() == 5);
  Reply tool = post(t.port, "/mcp",
                    request(3, "tools/call", {{"name", "echo"}, {"arguments", {{"text", "x"}}}}));
  CHECK(tool.json_body().at("result").at("content").at(0).at("text") == "x");
  CHECK(call(t.port, http::verb::get, "/mcp", {}, {{"Accept", "text/event-stream"}}).status == 405);
}

TEST_CASE("http: 1,000 connections opened and dropped, then a correct answer") {
  TestServer t;
  {
    net::io_context ioc;
    std::vector<tcp::socket> sockets;
    for (int i = 0; i < 1000; ++i) {
      tcp::socket s(ioc);
      boost::system::error_code ec;
      s.connect({net::ip::make_address("127.0.0.1"), t.port}, ec);
      if (i % 3 == 0 && !ec) net::write(s, net::buffer(std::string("POST /mcp HTTP/1.1\r\n")), ec);
      sockets.push_back(std::move(s));
      if (sockets.size() >= 200) sockets.clear();  // stay under the descriptor limit
    }
  }
  Reply r =
      post(t.port, "/mcp/tools/call", json::parse(R"({"name":"echo","arguments":{"text":"ok"}})"));
  CHECK(r.status == 200);
  CHECK(r.json_body().at("content").at(0).at("text") == "ok");
}

TEST_CASE("http: start fails on a taken port, stop is idempotent") {
  TestServer t;
  transport::server::HttpServerOptions options;
  options.port = t.port;
  transport::server::HttpServer second(t.server, options);
  CHECK_THROWS_AS(second.start(), std::runtime_error);
  t.http->stop();
  t.http->stop();
}

TEST_CASE("http: stop drains a request in flight") {
  TestServer t;
  Reply reply;
  std::thread client([&] {
    reply = post(t.port, "/mcp/tools/call", json::parse(R"({"name":"slow","arguments":{}})"));
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  t.http->stop();
  client.join();
  CHECK(reply.status == 200);
  CHECK(reply.json_body().at("content").at(0).at("text") == "slept");
}

TEST_CASE("http: a request whose session is deleted while it runs gets 503, never 202") {
  TestServer t;
  const std::string sid = t.open_session();
  const Headers session = with(kJsonPost, {{"Mcp-Session-Id", sid}});
  Reply reply;
  std::thread client([&] {
    reply = post(t.port, "/mcp", request(2, "tools/call", {{"name", "block"}}), session);
  });
  REQUIRE(t.wait_blocked(1));
  CHECK(call(t.port, http::verb::delete_, "/mcp", {}, session).status == 200);
  client.join();
  // 202 would say the body held only notifications; the request would look answered.
  CHECK(reply.status == 503);
  CHECK(reply.json_body().at("error").at("message").as_string().find("cancelled") !=
        std::string::npos);
}

TEST_CASE("http: stop() cancels work still running after shutdown_timeout and answers it") {
  transport::server::HttpServerOptions options;
  options.shutdown_timeout = std::chrono::milliseconds(300);
  TestServer t(options);
  const std::string sid = t.open_session();
  Reply on_mcp, on_router;
  std::thread mcp_client([&] {
    on_mcp = post(t.port, "/mcp", request(2, "tools/call", {{"name", "block"}}),
                  with(kJsonPost, {{"Mcp-Session-Id", sid}}));
  });
  std::thread router_client([&] {
    on_router = post(t.port, "/mcp/tools/call", json::parse(R"({"name":"block","arguments":{}})"));
  });
  REQUIRE(t.wait_blocked(2));
  const auto started = std::chrono::steady_clock::now();
  t.http->stop();
  const auto took = std::chrono::steady_clock::now() - started;
  mcp_client.join();
  router_client.join();
  // The tools would run for minutes: stop() waited shutdown_timeout, then cancelled them.
  CHECK(took < std::chrono::seconds(30));
  CHECK(on_mcp.status == 503);
  CHECK(on_router.status == 503);
  CHECK(on_router.json_body().at("error").at("message").as_string().find("cancelled") !=
        std::string::npos);
}

TEST_CASE("http: idle sessions are evicted") {
  transport::server::HttpServerOptions options;
  options.session_idle_timeout = std::chrono::milliseconds(200);
  TestServer t(options);
  const std::string sid = t.open_session();
  const Headers session = with(kJsonPost, {{"Mcp-Session-Id", sid}});
  CHECK(post(t.port, "/mcp", request(2, "ping"), session).status == 200);
  std::this_thread::sleep_for(std::chrono::milliseconds(700));
  CHECK(post(t.port, "/mcp", request(3, "ping"), session).status == 404);
}

TEST_CASE("http: probes, and stop() turns readiness to 503 first, serving through drain_grace") {
  transport::server::HttpServerOptions options;
  options.drain_grace = std::chrono::milliseconds(1500);
  TestServer t(options);
  CHECK(call(t.port, http::verb::get, "/health/live", {}, {}).body == R"({"status":"ok"})");
  Reply ready = call(t.port, http::verb::get, "/health/ready", {}, {});
  CHECK(ready.status == 200);
  CHECK(ready.body == R"({"status":"ready"})");
  CHECK(call(t.port, http::verb::post, "/health/ready", {}, {}).status == 405);
  CHECK(call(t.port, http::verb::get, "/health/ready", {}, {{"Host", "evil.example"}}).status ==
        403);

  std::thread stopper([&] { t.http->stop(); });
  bool draining = false;
  for (int i = 0; i < 100 && !draining; ++i) {
    draining = call(t.port, http::verb::get, "/health/ready", {}, {}).status == 503;
    if (!draining) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  CHECK(draining);
  // Still served: the balancer has not noticed yet.
  Reply during = post(t.port, "/mcp/tools/call",
                      json::parse(R"({"name":"echo","arguments":{"text":"still here"}})"));
  CHECK(during.status == 200);
  CHECK(call(t.port, http::verb::get, "/health/live", {}, {}).status == 200);
  stopper.join();
}
