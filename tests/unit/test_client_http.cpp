// The HTTP client transports against our own HttpServer on 127.0.0.1: Streamable HTTP (JSON and
// SSE answers, sessions, progress, elicitation, DELETE on close), legacy HTTP+SSE, the
// `POST <url>/<method>` dialect, the SSE parser, header expansion and unreachable servers.
#include "http_fixture.hpp"

#include "mcpclass/client/client.hpp"
#include "mcpclass/remote/remote_classifier.hpp"
#include "mcpclass/transport/client/http.hpp"
#include "net/sse_parser.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

using namespace mcpclass;
namespace json = boost::json;
using namespace std::chrono_literals;

namespace {

using test::HttpFixture;

std::shared_ptr<client::ClientTransport> streamable(const std::string& url) {
  transport::client::HttpClientOptions o;
  o.url = url;
  return transport::client::make_streamable_http_transport(o);
}

std::string first_text(const json::object& result) {
  return std::string(result.at("content").as_array().at(0).as_object().at("text").as_string());
}

}  // namespace

TEST_CASE("sse parser: priming events, multi-line data, CRLF, chunk boundaries, retry") {
  net::SseParser p;
  std::vector<net::SseEvent> events;
  auto sink = [&](net::SseEvent e) { events.push_back(std::move(e)); };
  p.feed("id: event-1\nretry: 500\ndata: \n\n", sink);  // priming: no event, id + retry kept
  CHECK(events.empty());
  CHECK(p.last_event_id() == "event-1");
  CHECK(p.retry_ms() == 500);
  p.feed("event: message\r\nid: e2\r\ndata: {\"a\":\r\ndata: 1}\r\n", sink);
  CHECK(events.empty());
  p.feed("\r\n: comment\n\ndata:x", sink);
  REQUIRE(events.size() == 1);
  CHECK(events[0].data == "{\"a\":\n1}");
  CHECK(events[0].id == "e2");
  p.feed("\n\n", sink);
  REQUIRE(events.size() == 2);
  CHECK(events[1].data == "x");
  CHECK(events[1].type == "message");
}

TEST_CASE("header values expand ${ENV}") {
  ::setenv("MCPCLASS_TEST_KEY", "s3cret", 1);
  CHECK(transport::client::expand_env("Bearer ${MCPCLASS_TEST_KEY}") == "Bearer s3cret");
  CHECK(transport::client::expand_env("${MCPCLASS_NOT_SET_ANYWHERE}x$$y$z") == "x$y$z");
  CHECK_THROWS(transport::client::expand_env("${OPEN"));
}

TEST_CASE("streamable http: the 2026-07-28 era on a server that keeps sessions, without one") {
  HttpFixture f;  // stateful: sessions for the handshake eras
  client::ClientOptions o;
  o.era = client::Era::stateless;
  client::Client c(streamable(f.url("/mcp")), o);
  CHECK(c.connect().protocol_version == "2026-07-28");
  CHECK(c.list_tools().size() >= 16);
  CHECK(first_text(c.call_tool("test_simple_text", std::nullopt)) ==
        "This is a simple text response for testing.");
  // Each request was served on a session of its own, which ends when its exchange is released:
  // just after the answer's last bytes are written, so possibly after the client has read them.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (f.server->session_count() != 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  CHECK(f.server->session_count() == 0);
  // The handshake eras still get their session on the same server.
  client::Client handshake(streamable(f.url("/mcp")));
  CHECK(handshake.connect().protocol_version == "2025-11-25");
  CHECK(f.server->session_count() == 1);
}

TEST_CASE("streamable http: session, SSE progress, elicitation, resources, DELETE on close") {
  HttpFixture f;
  client::ClientOptions o;
  o.callbacks.elicitation = [](const client::ElicitationRequest&) {
    return client::ElicitationResponse{"accept", {}};
  };
  {
    client::Client c(streamable(f.url("/mcp")), o);
    CHECK(c.connect().protocol_version == "2025-11-25");
    CHECK(f.server->session_count() == 1);
    CHECK(c.list_tools().size() >= 16);
    int progress = 0;
    client::RequestOptions ro;
    ro.on_progress = [&](const json::object&) { ++progress; };
    c.call_tool("test_tool_with_progress", json::object{}, ro);
    CHECK(progress == 3);
    const auto e = c.call_tool("test_elicitation_sep1034_defaults", json::object{});
    CHECK(first_text(e).find("John Doe") != std::string::npos);
    CHECK(c.read_resource("test://static-text").at("contents").as_array().size() == 1);
    CHECK(c.get_prompt("test_simple_prompt").at("messages").as_array().size() == 1);
    c.close();  // DELETE ends the session
  }
  for (int i = 0; i < 100 && f.server->session_count() != 0; ++i) std::this_thread::sleep_for(10ms);
  CHECK(f.server->session_count() == 0);
}

TEST_CASE("streamable http: the server ends the POST stream mid-call, the client resumes it") {
  // test_reconnection closes its SSE stream after the priming event (SEP-1699); the result comes
  // on the GET the client sends with Last-Event-ID after the server's retry delay.
  transport::server::HttpServerOptions options;
  options.sse_retry_ms = 50;
  HttpFixture f(options);
  std::mutex mutex;
  std::vector<std::string> logs;
  client::ClientOptions o;
  o.callbacks.on_log = [&](std::string_view line) {
    std::lock_guard lock(mutex);
    logs.emplace_back(line);
  };
  client::Client c(streamable(f.url("/mcp")), o);
  c.connect();
  const auto result = c.call_tool("test_reconnection", json::object{});
  CHECK(first_text(result).find("Reconnection test completed successfully") != std::string::npos);
  {
    std::lock_guard lock(mutex);
    CHECK(std::any_of(logs.begin(), logs.end(), [](const std::string& line) {
      return line.find("resuming stream after event") != std::string::npos;
    }));
  }
  // The same session goes on serving.
  CHECK(first_text(c.call_tool("test_simple_text", json::object{})).size() > 0);
}

TEST_CASE("remote classifier over streamable http, legacy sse and the REST dialect") {
  HttpFixture f;
  const char* text = "solve the integral of x squared with calculus and algebra";
  const auto l = f.local->classify(text, {true});
  // Not a structured binding: clang 14 cannot capture one in CAPTURE's lambda (the sanitizer run
  // builds the suite with clang).
  for (const auto& entry : std::vector<std::pair<std::string, std::string>>{
           {"streamable-http", "/mcp"}, {"sse", "/sse"}, {"rest", "/mcp"}, {"auto", "/sse"}}) {
    const std::string& kind = entry.first;
    const std::string& path = entry.second;
    CAPTURE(kind);
    remote::RemoteClassifierOptions o;
    o.transport = kind;
    o.url = f.url(path);
    o.headers = {{"X-Test", "${HOME}"}};
    const remote::RemoteClassifier remote(o);
    CHECK(remote.tool_name() == "classify_text");
    const auto r = remote.classify(text);
    CHECK(r.confidence == doctest::Approx(l.confidence));
    CHECK(r.category == (l.confidence >= 0.5 ? l.category : "other"));
  }
}

TEST_CASE("remote classifier: an unreachable HTTP server is RemoteUnreachable, quickly") {
  std::string url;
  {
    HttpFixture f;  // a port that was just in use and is now closed
    url = f.url("/mcp");
  }
  remote::RemoteClassifierOptions o;
  o.url = url;
  o.max_retries = 1;
  o.retry_backoff = 10ms;
  const auto start = std::chrono::steady_clock::now();
  CHECK_THROWS_AS(remote::RemoteClassifier{o}, remote::RemoteUnreachable);
  CHECK(std::chrono::steady_clock::now() - start < 2s);
}

TEST_CASE("remote classifier: a URL that is not an MCP endpoint fails at once, not as transient") {
  HttpFixture f;
  remote::RemoteClassifierOptions o;
  o.url = f.url("/nothing-here");
  o.max_retries = 3;
  try {
    remote::RemoteClassifier remote(o);
    FAIL("a 404 URL was accepted");
  } catch (const remote::RemoteError& e) {
    CHECK(e.failure() == remote::RemoteFailure::protocol);
    CHECK_FALSE(e.transient());
    CHECK(std::string(e.what()).find("HTTP 404") != std::string::npos);
  }
  // The client itself reports the status as a typed error.
  client::Client c(streamable(f.url("/nothing-here")));
  try {
    c.connect();
    FAIL("connect succeeded");
  } catch (const client::HttpStatusError& e) {
    CHECK(e.status() == 404);
    CHECK(e.permanent());
  }
}

TEST_CASE("http client: URLs that are not http:// or https:// are refused clearly") {
  for (const char* url : {"ftp://example.com/mcp", "not a url", "http:///mcp"}) {
    CAPTURE(url);
    client::Client c(streamable(url));
    CHECK_THROWS_AS(c.connect(), client::TransportError);
  }
}
