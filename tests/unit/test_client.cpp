// The client engine against the real server engine in-process (loopback transport): handshake,
// pagination, tools, resources, prompts, timeouts with notifications/cancelled, progress,
// sampling, elicitation with schema defaults, roots, version negotiation and the stateless era.
#include "client_loopback.hpp"
#include "conformance_fixture.hpp"

#include "mcpclass/client/client.hpp"
#include "mcpclass/util/executor.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <thread>

using namespace mcpclass;
namespace json = boost::json;
using namespace std::chrono_literals;

namespace {

struct Fixture {
  util::ThreadPool pool{4};
  std::shared_ptr<server::Server> server;
  std::atomic<bool> slow_cancelled{false};

  explicit Fixture(std::size_t page_size = 100) {
    server::ServerOptions o;
    o.page_size = page_size;
    server = server::Server::create(o, pool.executor());
    register_conformance_fixture(*server);
    server::Tool slow;
    slow.name = "slow";
    slow.description = "Sleeps for 5 s unless cancelled";
    slow.handler = [this](const json::object&, server::RequestContext& ctx) {
      if (!ctx.sleep_for(5s)) slow_cancelled = true;
      return server::ToolResult::text("done");
    };
    server->add_tool(slow);
    server::Tool roots;
    roots.name = "ask_roots";
    roots.description = "Returns the client's roots";
    roots.handler = [](const json::object&, server::RequestContext& ctx) {
      return server::ToolResult::text(json::serialize(ctx.request("roots/list", json::object{})));
    };
    server->add_tool(roots);
  }
  ~Fixture() { pool.stop(); }

  std::shared_ptr<test::LoopbackTransport> transport() {
    return std::make_shared<test::LoopbackTransport>(server);
  }
};

std::string first_text(const json::object& result) {
  return std::string(result.at("content").as_array().at(0).as_object().at("text").as_string());
}

}  // namespace

TEST_CASE("client: handshake, paginated tools/list, tools/call, resources, prompts, ping") {
  Fixture f(/*page_size=*/3);
  client::Client c(f.transport());
  const auto& d = c.connect();
  CHECK(d.protocol_version == "2025-11-25");
  CHECK(d.server_info.at("name").as_string() == "mcpclass");
  CHECK(d.capabilities.contains("tools"));
  CHECK(c.connected());

  const json::array tools = c.list_tools();
  CHECK(tools.size() >= 16);  // 14 fixture tools + 2, across several pages of 3

  const json::object r = c.call_tool("test_simple_text", std::nullopt);
  CHECK(first_text(r) == "This is a simple text response for testing.");
  const json::object e = c.call_tool("test_error_handling", json::object{});
  CHECK(e.at("isError").as_bool());

  CHECK(c.list_resources().size() >= 3);
  const json::object res = c.read_resource("test://static-text");
  CHECK(res.at("contents").as_array().at(0).as_object().at("text").as_string() ==
        "This is the content of the static text resource.");
  CHECK(c.list_prompts().size() == 4);
  const json::object p = c.get_prompt("test_prompt_with_arguments", {{"arg1", "A"}, {"arg2", "B"}});
  CHECK(json::serialize(p).find("arg1='A'") != std::string::npos);
  c.ping();

  try {
    c.call_tool("no_such_tool", json::object{});
    FAIL("expected an error");
  } catch (const client::RpcError& err) {
    CHECK(err.error().code == -32602);
  }
  c.close();
  CHECK_FALSE(c.connected());
  CHECK_THROWS_AS(c.ping(), client::TransportError);
}

TEST_CASE("client: a timeout throws TimeoutError on time and cancels the request on the server") {
  Fixture f;
  client::Client c(f.transport());
  c.connect();
  const auto start = std::chrono::steady_clock::now();
  client::RequestOptions ro;
  ro.timeout = 300ms;
  CHECK_THROWS_AS(c.call_tool("slow", json::object{}, ro), client::TimeoutError);
  const auto elapsed = std::chrono::steady_clock::now() - start;
  CHECK(elapsed >= 300ms);
  CHECK(elapsed < 330ms + 50ms);
  for (int i = 0; i < 100 && !f.slow_cancelled; ++i) std::this_thread::sleep_for(10ms);
  CHECK(f.slow_cancelled);  // notifications/cancelled reached the handler
  c.ping();                 // the connection is still usable
}

TEST_CASE("client: the default timeout is finite") {
  client::ClientOptions o;
  o.request_timeout = std::chrono::milliseconds::zero();
  Fixture f;
  client::Client c(f.transport(), o);
  c.connect();
  // Zero is replaced by the 30 s default, not "wait forever": a quick call still works.
  c.ping();
}

TEST_CASE("client: progress notifications reach the request's callback before the result") {
  Fixture f;
  client::Client c(f.transport());
  c.connect();
  std::vector<double> seen;
  std::mutex m;
  client::RequestOptions ro;
  ro.on_progress = [&](const json::object& p) {
    std::lock_guard lock(m);
    seen.push_back(p.at("progress").to_number<double>());
  };
  const auto r = c.call_tool("test_tool_with_progress", json::object{}, ro);
  std::lock_guard lock(m);
  CHECK(seen == std::vector<double>{0, 50, 100});
  CHECK_FALSE((r.contains("isError") && r.at("isError").as_bool()));
}

TEST_CASE("client: elicitation is answered through the host with schema defaults applied") {
  Fixture f;
  client::ClientOptions o;
  std::string message;
  o.callbacks.elicitation = [&](const client::ElicitationRequest& r) {
    message = r.message;
    return client::ElicitationResponse{"accept", {{"name", "Given Name"}}};
  };
  client::Client c(f.transport(), o);
  c.connect();
  const auto r = c.call_tool("test_elicitation_sep1034_defaults", json::object{});
  const std::string text = first_text(r);
  CHECK(text.find("Given Name") != std::string::npos);  // the host's value wins
  CHECK(text.find("\"age\":30") != std::string::npos);
  CHECK(text.find("\"score\":") != std::string::npos);
  CHECK(text.find("\"status\":\"active\"") != std::string::npos);
  CHECK(text.find("\"verified\":true") != std::string::npos);
}

TEST_CASE("client: sampling and roots are answered through host callbacks") {
  Fixture f;
  client::ClientOptions o;
  o.callbacks.sampling = [](const json::object& params) {
    const auto& msg = params.at("messages").as_array().at(0).as_object();
    const std::string prompt(msg.at("content").as_object().at("text").as_string());
    return json::object{{"role", "assistant"},
                        {"content", json::object{{"type", "text"}, {"text", "echo " + prompt}}},
                        {"model", "test"}};
  };
  o.callbacks.roots = [] {
    return json::array{json::object{{"uri", "file:///work"}, {"name", "work"}}};
  };
  client::Client c(f.transport(), o);
  c.connect();
  CHECK(first_text(c.call_tool("test_sampling", json::object{{"prompt", "hi"}})) ==
        "LLM response: echo hi");
  CHECK(first_text(c.call_tool("ask_roots", json::object{})).find("file:///work") !=
        std::string::npos);
}

TEST_CASE("client: without a callback the capability is not declared and the server is refused") {
  Fixture f;
  client::Client c(f.transport());
  c.connect();
  bool refused = false;
  try {
    const auto r = c.call_tool("test_sampling", json::object{{"prompt", "hi"}});
    refused = r.contains("isError") && r.at("isError").as_bool();
  } catch (const client::RpcError&) {
    refused = true;
  }
  CHECK(refused);
}

TEST_CASE("client: apply_schema_defaults fills only absent fields") {
  const json::object schema = json::parse(R"({"type":"object","properties":{
      "a":{"type":"string","default":"x"},"b":{"type":"integer","default":1},
      "c":{"type":"boolean"}}})")
                                  .as_object();
  const auto out = client::apply_schema_defaults({{"b", 5}}, schema);
  CHECK(out.at("a").as_string() == "x");
  CHECK(out.at("b").as_int64() == 5);
  CHECK_FALSE(out.contains("c"));
}

namespace {

/// Answers initialize with a fixed version; everything else with {}.
class ScriptedTransport : public client::ClientTransport {
 public:
  explicit ScriptedTransport(std::string version) : version_(std::move(version)) {}
  void start(client::TransportHandlers h) override {
    handlers_ = std::move(h);
    open_ = true;
  }
  void send(const json::value& message) override {
    const auto& o = message.as_object();
    sent.push_back(message);
    if (!o.contains("id") || !o.contains("method")) return;
    json::object result;
    if (o.at("method") == "initialize")
      result = {{"protocolVersion", version_},
                {"capabilities", json::object{}},
                {"serverInfo", json::object{{"name", "s"}, {"version", "1"}}}};
    handlers_.on_message(json::object{{"jsonrpc", "2.0"}, {"id", o.at("id")}, {"result", result}});
    // A 200-JSON answer to a notification with no id must be tolerated.
    handlers_.on_message(json::object{{"jsonrpc", "2.0"}, {"result", json::object{}}});
  }
  void close() override { open_ = false; }
  bool is_open() const override { return open_; }
  std::string describe() const override { return "scripted"; }
  std::vector<json::value> sent;

 private:
  std::string version_;
  client::TransportHandlers handlers_;
  bool open_ = false;
};

}  // namespace

TEST_CASE("client: version negotiation accepts the handshake revisions and refuses others") {
  for (const char* ok : {"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}) {
    auto t = std::make_shared<ScriptedTransport>(ok);
    client::Client c(t);
    CHECK(c.connect().protocol_version == ok);
    // initialize offered 2025-11-25 with clientInfo, then notifications/initialized.
    const auto& init = t->sent.at(0).as_object().at("params").as_object();
    CHECK(init.at("protocolVersion").as_string() == "2025-11-25");
    CHECK(init.at("clientInfo").as_object().contains("version"));
    CHECK(t->sent.at(1).as_object().at("method").as_string() == "notifications/initialized");
    c.ping();
  }
  for (const char* bad : {"1999-01-01", "", "2026-07-28"}) {
    client::Client c(std::make_shared<ScriptedTransport>(bad));
    CHECK_THROWS_AS(c.connect(), client::ProtocolViolation);
    CHECK_FALSE(c.connected());
  }
}

TEST_CASE("client: the stateless 2026-07-28 era uses server/discover and per-request _meta") {
  Fixture f;
  client::ClientOptions o;
  o.era = client::Era::stateless;
  client::Client c(f.transport(), o);
  const auto& d = c.connect();
  CHECK(d.protocol_version == "2026-07-28");
  CHECK(c.list_tools().size() >= 16);
  CHECK(first_text(c.call_tool("test_simple_text", std::nullopt)) ==
        "This is a simple text response for testing.");
}

TEST_CASE("client: automatic era falls back to initialize when server/discover fails") {
  client::ClientOptions o;
  o.era = client::Era::automatic;
  auto t = std::make_shared<ScriptedTransport>("2025-06-18");
  client::Client c(t, o);
  // The scripted server answers server/discover with {} (no supportedVersions): fall back.
  CHECK(c.connect().protocol_version == "2025-06-18");
}
