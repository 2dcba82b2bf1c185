// HTTPS end to end on 127.0.0.1 with a throw-away CA (tls_files.hpp): our client transports
// against our TLS server (Streamable HTTP with JSON and SSE answers, legacy SSE, the REST dialect,
// the remote classifier), certificate and host name verification failures, plain-HTTP and silent
// clients on the TLS port, limits and guards over TLS, curl as a third-party client, and unusable
// certificate or key files at start, and a drain on stop.
#include "http_fixture.hpp"
#include "tls_files.hpp"

#include "mcpclass/client/client.hpp"
#include "mcpclass/remote/remote_classifier.hpp"
#include "mcpclass/server/tool.hpp"
#include "mcpclass/transport/client/http.hpp"
#include "net/http_client.hpp"

#include <doctest/doctest.h>
#include <sys/wait.h>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/json.hpp>

#include <cstdio>
#include <string>
#include <thread>
#include <vector>

using namespace mcpclass;
namespace json = boost::json;
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using namespace std::chrono_literals;

namespace {

using test::HttpFixture;
using test::TlsFiles;

transport::server::HttpServerOptions tls_server(const TlsFiles& files,
                                                const std::string& name = "server") {
  transport::server::HttpServerOptions o;
  o.tls_cert_file = files.path(name + ".pem");
  o.tls_key_file = files.path(name + ".key");
  return o;
}

std::shared_ptr<client::ClientTransport> transport_for(const std::string& kind,
                                                       const std::string& url,
                                                       const std::string& ca_file) {
  transport::client::HttpClientOptions o;
  o.url = url;
  o.ca_file = ca_file;
  o.connect_timeout = 5s;
  if (kind == "sse") return transport::client::make_legacy_sse_transport(o);
  if (kind == "rest") return transport::client::make_rest_transport(o);
  return transport::client::make_streamable_http_transport(o);
}

std::string first_text(const json::object& result) {
  return std::string(result.at("content").as_array().at(0).as_object().at("text").as_string());
}

// The message of the TransportError connect() throws; empty when it connected.
std::string connect_error(const std::string& kind, const std::string& url,
                          const std::string& ca_file) {
  try {
    client::Client c(transport_for(kind, url, ca_file));
    c.connect();
    return {};
  } catch (const client::CertificateError& e) {
    return std::string("CertificateError: ") + e.what();
  } catch (const client::TransportError& e) {
    return e.what();
  }
}

struct RawReply {
  bool answered = false;
  unsigned status = 0;
  std::string body;
  std::string error;  ///< why there is no answer
};

using TlsStream = beast::ssl_stream<beast::tcp_stream>;

// Coroutines are named functions, not lambdas: GCC 12 warns falsely (mismatched-new-delete) on
// inlined coroutine lambdas, and, depending on what else the translation unit inlines, on named
// coroutines too (the frame's own operator new/delete pair is matched; GCC bug 109224).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
asio::awaitable<void> tls_exchange_steps(TlsStream& stream, unsigned short port,
                                         std::string request, RawReply& reply) {
  constexpr auto tuple = asio::as_tuple(asio::use_awaitable);
  auto& tcp_layer = beast::get_lowest_layer(stream);
  tcp_layer.expires_after(10s);
  auto [cec] = co_await tcp_layer.async_connect({asio::ip::make_address("127.0.0.1"), port}, tuple);
  if (cec) co_return void(reply.error = "connect: " + cec.message());
  auto [hec] = co_await stream.async_handshake(asio::ssl::stream_base::client, tuple);
  if (hec) co_return void(reply.error = "handshake: " + hec.message());
  auto [wec, wn] = co_await asio::async_write(stream, asio::buffer(request), tuple);
  if (wec) co_return void(reply.error = "write: " + wec.message());
  beast::flat_buffer buffer;
  http::response<http::string_body> res;
  auto [rec, rn] = co_await http::async_read(stream, buffer, res, tuple);
  if (rec) co_return void(reply.error = "read: " + rec.message());
  reply.answered = true;
  reply.status = res.result_int();
  reply.body = res.body();
}

// Sends `request` as is over TLS (trusting `ca`) and reads one response. Every step is bounded.
RawReply tls_exchange(unsigned short port, const std::string& ca, std::string request) {
  asio::io_context ioc;
  asio::ssl::context context(asio::ssl::context::tls_client);
  context.load_verify_file(ca);
  context.set_verify_mode(asio::ssl::verify_peer);
  TlsStream stream(ioc, context);
  RawReply reply;
  asio::co_spawn(ioc, tls_exchange_steps(stream, port, std::move(request), reply), asio::detached);
  ioc.run();
  return reply;
}

std::string raw_request(unsigned short port, const std::string& method, const std::string& target,
                        const std::string& body = {}, const std::string& extra_headers = {}) {
  return method + " " + target + " HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) +
         "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
         "\r\n" + extra_headers + "\r\n" + body;
}

const std::string kEchoCall = R"({"name":"test_simple_text","arguments":{}})";

asio::awaitable<void> plain_exchange_steps(beast::tcp_stream& stream, unsigned short port,
                                           std::string bytes, std::string& received) {
  constexpr auto tuple = asio::as_tuple(asio::use_awaitable);
  stream.expires_after(10s);
  auto [cec] = co_await stream.async_connect({asio::ip::make_address("127.0.0.1"), port}, tuple);
  if (cec) co_return void(received = "<connect failed>");
  if (!bytes.empty()) co_await asio::async_write(stream, asio::buffer(bytes), tuple);
  char chunk[4096];
  for (;;) {
    auto [ec, n] = co_await stream.async_read_some(asio::buffer(chunk), tuple);
    received.append(chunk, n);
    if (ec == beast::error::timeout) received += "<timeout>";
    if (ec) co_return;
  }
}

// What a plain TCP client gets back after sending `bytes` (nothing at all when empty) until the
// server closes; "<timeout>" when it is still open after 10 s.
std::string plain_exchange(unsigned short port, std::string bytes) {
  asio::io_context ioc;
  beast::tcp_stream stream(ioc);
  std::string received;
  asio::co_spawn(ioc, plain_exchange_steps(stream, port, std::move(bytes), received),
                 asio::detached);
  ioc.run();
  return received;
}

// Runs a command line; its exit status and its output (stdout and stderr).
std::pair<int, std::string> run(const std::string& command) {
  std::string output;
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  REQUIRE(pipe != nullptr);
  char buffer[4096];
  while (const std::size_t n = std::fread(buffer, 1, sizeof buffer, pipe)) output.append(buffer, n);
  const int status = ::pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
}

}  // namespace

TEST_CASE("tls: Streamable HTTP over HTTPS: JSON and SSE answers, elicitation, DELETE on close") {
  TlsFiles files;
  HttpFixture f(tls_server(files));
  client::ClientOptions o;
  o.callbacks.elicitation = [](const client::ElicitationRequest&) {
    return client::ElicitationResponse{"accept", {}};
  };
  {
    client::Client c(transport_for("streamable-http", f.url("/mcp"), files.ca()), o);
    CHECK(c.connect().protocol_version == "2025-11-25");
    CHECK(f.server->session_count() == 1);
    CHECK(first_text(c.call_tool("test_simple_text", json::object{})).size() > 0);  // JSON
    int progress = 0;
    client::RequestOptions ro;
    ro.on_progress = [&](const json::object&) { ++progress; };
    c.call_tool("test_tool_with_progress", json::object{}, ro);  // an SSE answer
    CHECK(progress == 3);
    // The server ends the POST's SSE stream mid-call; the client resumes it with a GET.
    CHECK(first_text(c.call_tool("test_reconnection", json::object{})).find("successfully") !=
          std::string::npos);
    const auto e = c.call_tool("test_elicitation_sep1034_defaults", json::object{});
    CHECK(first_text(e).find("John Doe") != std::string::npos);
    c.close();
  }
  for (int i = 0; i < 100 && f.server->session_count() != 0; ++i) std::this_thread::sleep_for(10ms);
  CHECK(f.server->session_count() == 0);
  // A DNS name works as well as the IP address (SNI and host name check on "localhost").
  client::Client by_name(transport_for("streamable-http", f.url("/mcp", "localhost"), files.ca()));
  CHECK(by_name.connect().protocol_version == "2025-11-25");
}

TEST_CASE("tls: legacy SSE and the REST dialect over HTTPS") {
  TlsFiles files;
  HttpFixture f(tls_server(files));
  for (const auto& entry :
       std::vector<std::pair<std::string, std::string>>{{"sse", "/sse"}, {"rest", "/mcp"}}) {
    const std::string& kind = entry.first;
    const std::string& path = entry.second;
    CAPTURE(kind);
    client::Client c(transport_for(kind, f.url(path), files.ca()));
    c.connect();
    const auto result = c.call_tool("classify_text", json::object{{"text", "integrate x squared"}});
    CHECK(result.at("structuredContent").as_object().contains("class"));
  }
}

TEST_CASE("tls: the remote classifier over https with a CA file, on every HTTP transport") {
  TlsFiles files;
  HttpFixture f(tls_server(files));
  const char* text = "solve the integral of x squared with calculus and algebra";
  const auto local = f.local->classify(text, {true});
  for (const auto& entry : std::vector<std::pair<std::string, std::string>>{
           {"streamable-http", "/mcp"}, {"sse", "/sse"}, {"rest", "/mcp"}}) {
    const std::string& kind = entry.first;
    const std::string& path = entry.second;
    CAPTURE(kind);
    remote::RemoteClassifierOptions o;
    o.transport = kind;
    o.url = f.url(path);
    o.ca_file = files.ca();
    const remote::RemoteClassifier remote(o);
    CHECK(remote.classify(text).confidence == doctest::Approx(local.confidence));
  }
}

TEST_CASE("tls: a server the client cannot verify is a clear, distinguishable error") {
  TlsFiles files;
  HttpFixture f(tls_server(files));
  const std::string origin = "https://127.0.0.1:" + std::to_string(f.port());
  SUBCASE("no CA file: the system trust store does not know the test CA") {
    for (const auto& entry : std::vector<std::pair<std::string, std::string>>{
             {"streamable-http", "/mcp"}, {"sse", "/sse"}, {"rest", "/mcp"}}) {
      const std::string& kind = entry.first;
      const std::string& path = entry.second;
      CAPTURE(kind);
      const std::string error = connect_error(kind, f.url(path), "");
      CHECK(error.find("TLS certificate verification failed for " + origin + ": ") !=
            std::string::npos);
      CHECK(error.find("unable to get local issuer certificate") != std::string::npos);
      CHECK(error.rfind("CertificateError: ", 0) == 0);  // its own type on every transport
    }
    remote::RemoteClassifierOptions o;
    o.url = f.url("/mcp");
    o.max_retries = 3;
    try {
      remote::RemoteClassifier{o};
      FAIL("connected to a server it cannot verify");
    } catch (const remote::RemoteUntrusted& e) {  // not retried: only a new CA or cert helps
      CHECK_FALSE(e.transient());
      CHECK(to_string(e.failure()) == "untrusted");
      CHECK(std::string(e.what()).find("TLS certificate verification failed") != std::string::npos);
    }
  }
  SUBCASE("a CA file that is not the server's CA") {
    const std::string error = connect_error("streamable-http", f.url("/mcp"), files.cert());
    CHECK(error.find("TLS certificate verification failed for " + origin) != std::string::npos);
    CHECK(error.rfind("CertificateError: ", 0) == 0);
  }
  SUBCASE("an unreadable CA file fails at start, naming it") {
    const std::string error =
        connect_error("streamable-http", f.url("/mcp"), files.path("no-such-ca.pem"));
    CHECK(error.find("no-such-ca.pem") != std::string::npos);
  }
  // The refused clients did not hurt the server.
  client::Client c(transport_for("streamable-http", f.url("/mcp"), files.ca()));
  CHECK(c.connect().protocol_version == "2025-11-25");
}

TEST_CASE("tls: the HTTP client engine types its failures: certificate, connect, unusable") {
  using net::HttpClientError;
  using net::HttpFailure;
  TlsFiles files;
  HttpFixture f(tls_server(files));
  net::HttpRequest get;
  get.method = "GET";
  get.target = "/health";
  get.timeout = 5s;
  {  // The kind, not the wording, says the certificate was refused.
    net::HttpEngine engine(5s, files.cert());
    const auto r = engine.perform(net::parse_http_url(f.url("/health")), get);
    CHECK(r.error.kind == HttpFailure::certificate);
    CHECK(r.error.message.find("TLS certificate verification failed") != std::string::npos);
  }
  {  // A plain HTTP client on the HTTPS port: the handshake is not the certificate's fault.
    net::HttpEngine engine(5s, files.ca());
    auto url = net::parse_http_url(f.url("/health"));
    url.tls = false;
    const auto r = engine.perform(url, get);
    CHECK(r.error.kind != HttpFailure::certificate);
    CHECK(r.error.kind != HttpFailure::none);
  }
  {  // Trusted: no failure at all.
    net::HttpEngine engine(5s, files.ca());
    const auto r = engine.perform(net::parse_http_url(f.url("/health")), get);
    CHECK(r.error.kind == HttpFailure::none);
    CHECK(r.head.status == 200);
  }
  try {
    net::parse_http_url("ftp://127.0.0.1/");
    FAIL("an ftp:// URL parsed");
  } catch (const HttpClientError& e) {
    CHECK(e.kind() == HttpFailure::unusable);
  }
  net::HttpEngine unusable(5s, files.path("no-such-ca.pem"));
  try {
    unusable.prepare_tls();
    FAIL("an unreadable CA file was accepted");
  } catch (const HttpClientError& e) {
    CHECK(e.kind() == HttpFailure::unusable);
    CHECK(std::string(e.what()).find("no-such-ca.pem") != std::string::npos);
  }
}

TEST_CASE("tls: a certificate for another host name is refused (IP and DNS name checks)") {
  TlsFiles files;
  HttpFixture f(tls_server(files, "wrong-name"));  // valid chain, SAN DNS:wrong-name.example
  const std::string by_ip = connect_error("streamable-http", f.url("/mcp"), files.ca());
  CHECK(by_ip.find("TLS certificate verification failed for https://127.0.0.1:") !=
        std::string::npos);
  CHECK(by_ip.find("IP address mismatch") != std::string::npos);
  const std::string by_name =
      connect_error("streamable-http", f.url("/mcp", "localhost"), files.ca());
  CHECK(by_name.find("TLS certificate verification failed for https://localhost:") !=
        std::string::npos);
  CHECK(by_name.find("hostname mismatch") != std::string::npos);
}

TEST_CASE("tls: plain HTTP and silent clients on the HTTPS port lose their connection only") {
  TlsFiles files;
  auto options = tls_server(files);
  options.read_timeout = 300ms;  // also bounds the handshake
  HttpFixture f(options);
  SUBCASE("plain HTTP request") {
    const std::string got = plain_exchange(f.port(), raw_request(f.port(), "GET", "/health"));
    CHECK(got.find("HTTP/1.1") == std::string::npos);
    CHECK(got.find("<timeout>") == std::string::npos);  // closed by the server
  }
  SUBCASE("a client that connects and never starts the handshake") {
    CHECK(plain_exchange(f.port(), "").find("<timeout>") == std::string::npos);
  }
  SUBCASE("garbage instead of a ClientHello") {
    const std::string got = plain_exchange(f.port(), std::string(300, '\x16'));
    CHECK(got.find("<timeout>") == std::string::npos);
  }
  const RawReply next = tls_exchange(f.port(), files.ca(), raw_request(f.port(), "GET", "/health"));
  INFO(next.error);
  CHECK(next.status == 200);
  CHECK(json::parse(next.body).at("status") == "ok");
}

TEST_CASE("tls: limits, guards and metrics behave the same over HTTPS") {
  TlsFiles files;
  auto options = tls_server(files);
  options.max_body_bytes = 1024;
  options.max_header_bytes = 2048;
  options.bearer_tokens = {"s3cret"};
  options.allowed_hosts = {"mcp.example"};  // listed hosts are checked even with tokens
  HttpFixture f(options);
  const unsigned short port = f.port();
  const std::string auth = "Authorization: Bearer s3cret\r\n";

  const RawReply ok =
      tls_exchange(port, files.ca(), raw_request(port, "POST", "/mcp/tools/call", kEchoCall, auth));
  INFO(ok.error);
  CHECK(ok.status == 200);
  CHECK(tls_exchange(port, files.ca(), raw_request(port, "POST", "/mcp/tools/call", kEchoCall))
            .status == 401);
  CHECK(tls_exchange(port, files.ca(),
                     raw_request(port, "POST", "/mcp/tools/call", std::string(2000, ' '), auth))
            .status == 413);
  CHECK(tls_exchange(port, files.ca(),
                     raw_request(port, "POST", "/mcp/tools/call", kEchoCall,
                                 auth + "X-Padding: " + std::string(4096, 'x') + "\r\n"))
            .status == 431);
  std::string evil_host = raw_request(port, "GET", "/metrics", {}, auth);
  evil_host.replace(evil_host.find("127.0.0.1:"), 9, "evil.example");
  CHECK(tls_exchange(port, files.ca(), evil_host).status == 403);
  const RawReply metrics =
      tls_exchange(port, files.ca(), raw_request(port, "GET", "/metrics", {}, auth));
  CHECK(metrics.status == 200);
  CHECK(metrics.body.find(R"(mcpclass_http_requests_total{route="other",code="413"} 1)") !=
        std::string::npos);
}

TEST_CASE("tls: stop drains a request in flight over HTTPS") {
  TlsFiles files;
  HttpFixture f(tls_server(files));
  server::Tool slow;
  slow.name = "slow";
  slow.description = "Takes 500 ms";
  slow.handler = [](const json::object&, server::RequestContext& ctx) {
    ctx.sleep_for(500ms);
    return server::ToolResult::text("slept");
  };
  f.server->add_tool(slow);
  RawReply reply;
  std::thread client([&] {
    reply = tls_exchange(
        f.port(), files.ca(),
        raw_request(f.port(), "POST", "/mcp/tools/call", R"({"name":"slow","arguments":{}})"));
  });
  std::this_thread::sleep_for(200ms);
  f.http->stop();
  client.join();
  INFO(reply.error);
  CHECK(reply.status == 200);
  CHECK(json::parse(reply.body).at("content").at(0).at("text") == "slept");
}

TEST_CASE("tls: curl (a third-party client) with --cacert reaches /health and /mcp/tools/call") {
  TlsFiles files;
  HttpFixture f(tls_server(files));
  const std::string curl = "curl -sS --max-time 20 ";
  // Not structured bindings: clang 14 cannot capture one in INFO's lambda (the sanitizer run
  // builds the suite with clang).
  const auto health_run = run(curl + "--cacert " + files.ca() + " " + f.url("/health"));
  const int health_status = health_run.first;
  const std::string& health = health_run.second;
  INFO(health);
  REQUIRE(health_status == 0);
  CHECK(json::parse(health).at("status") == "ok");

  const auto call_run =
      run(curl + "--cacert " + files.ca() +
          " -H 'Content-Type: application/json' -d "
          "'{\"name\":\"classify_text\",\"arguments\":{\"text\":\"integrate x squared\"}}' " +
          f.url("/mcp/tools/call", "localhost"));
  const int call_status = call_run.first;
  const std::string& call = call_run.second;
  INFO(call);
  REQUIRE(call_status == 0);
  CHECK(json::parse(call).at("structuredContent").as_object().contains("class"));

  // Without the CA, curl refuses the server too (exit 60: peer certificate cannot be verified).
  CHECK(run(curl + f.url("/health")).first == 60);
}

TEST_CASE("tls: an unusable certificate or key is a clear error at start, naming the file") {
  TlsFiles files;
  util::ThreadPool pool{1};
  auto server = server::Server::create({}, pool.executor());
  auto start_error = [&](const std::string& cert, const std::string& key) -> std::string {
    transport::server::HttpServerOptions o;
    o.tls_cert_file = cert;
    o.tls_key_file = key;
    transport::server::HttpServer http(server, o);
    try {
      http.start();
    } catch (const std::runtime_error& e) {
      CHECK(http.port() == 0);  // nothing was bound
      return e.what();
    }
    return {};
  };
  const std::string missing = files.path("missing.pem");
  CHECK(start_error(missing, files.key())
            .find("cannot read the certificate chain file '" + missing + "'") != std::string::npos);
  CHECK(start_error(files.cert(), missing)
            .find("cannot read the private key file '" + missing + "'") != std::string::npos);
  const std::string not_pem = files.path("server.ext");
  CHECK(start_error(not_pem, files.key()).find("'" + not_pem + "' is not a usable PEM") !=
        std::string::npos);
  const std::string stray = files.path("stray.key");
  CHECK(start_error(files.cert(), stray).find("'" + stray + "'") != std::string::npos);
  CHECK(start_error(files.cert(), "").find("both a certificate chain file and a key file") !=
        std::string::npos);
  pool.stop();
}
