// JWT access tokens end to end, over real sockets on 127.0.0.1: an authorization server that
// issues JWTs by client credentials and publishes its JWK Set (jwt_authorization_server.hpp), a
// classification server configured by a `server.http.auth.jwt` document, and the project's own
// OAuth client; then forged, expired, wrong-audience and under-scoped tokens sent by hand.
#include "jwt_authorization_server.hpp"
#include "mcpclass/auth/oauth.hpp"
#include "mcpclass/client/client.hpp"
#include "mcpclass/config/config.hpp"
#include "mcpclass/service/classification_service.hpp"
#include "mcpclass/service/http_front.hpp"
#include "mcpclass/transport/client/http.hpp"
#include "mcpclass/transport/server/http_server.hpp"
#include "mcpclass/util/executor.hpp"
#include "net/http_client.hpp"

#include <doctest/doctest.h>

#include <boost/asio/ip/tcp.hpp>

#include <fmt/format.h>

#include <thread>

using namespace mcpclass;
namespace json = boost::json;

namespace {

unsigned short free_port() {
  boost::asio::io_context ioc;
  boost::asio::ip::tcp::acceptor a(ioc, {boost::asio::ip::make_address("127.0.0.1"), 0});
  return a.local_endpoint().port();
}

/// The classification server, protected by JWTs from `as`.
struct ProtectedServer {
  unsigned short port = free_port();
  std::string resource = "http://127.0.0.1:" + std::to_string(port) + "/mcp";
  std::unique_ptr<service::ClassificationService> service;
  std::unique_ptr<transport::server::HttpServer> http;

  explicit ProtectedServer(const test::JwtAuthorizationServer& as, const std::string& extra = "") {
    const std::string doc = fmt::format(R"(
server:
  http:
    host: 127.0.0.1
    port: {}
    auth:
      jwt:
        resource: {}
        issuer: {}
        jwks_url: {}/jwks
        jwks_refetch_interval: 1
        max_token_bytes: 8192
        scopes:
          default: [mcp]
          tools:
            classify_text: [classify]
{})",
                                        port, resource, as.base(), as.base(), extra);
    const auto config = config::parse_config(doc);
    service = std::make_unique<service::ClassificationService>(config);
    // The front every entry point starts, so its http_classify endpoint is checked too.
    http = service::make_http_front(
        *service, {.http = service->http_options(), .stdio = nullptr, .spans = nullptr});
    http->start();
  }
  ~ProtectedServer() {
    http->stop();
    service->stop();
  }
  std::string url(const std::string& path) const {
    return "http://127.0.0.1:" + std::to_string(port) + path;
  }
};

struct Answer {
  int status = 0;
  std::string www_authenticate;
  std::string body;
  std::string retry_after;
  std::string error;  ///< the client's, when there is no answer (5 s at most)
};

Answer request(const std::string& url, const std::string& method, const std::string& token,
               const std::string& body = "") {
  net::HttpEngine engine(std::chrono::seconds(5), "");
  net::HttpRequest req;
  req.method = method;
  const auto parsed = net::parse_http_url(url);
  req.target = parsed.target;
  req.timeout = std::chrono::seconds(5);
  if (!token.empty()) req.headers.emplace_back("Authorization", "Bearer " + token);
  if (!body.empty()) {
    req.headers.emplace_back("Content-Type", "application/json");
    req.headers.emplace_back("Accept", "application/json, text/event-stream");
    req.body = body;
  }
  auto r = engine.perform(parsed, std::move(req));
  engine.stop();
  return {r.head.status, r.head.header("www-authenticate"), r.body, r.head.header("retry-after"),
          r.error.message};
}

Answer send(const std::string& url, const std::string& method, const std::string& token,
            const std::string& body = "") {
  auto answer = request(url, method, token, body);
  REQUIRE(answer.error.empty());
  return answer;
}

/// send(), repeated while the answer is the 503 of a kid whose keys are being fetched.
Answer send_once_fetched(const std::string& url, const std::string& method,
                         const std::string& token, const std::string& body = "") {
  for (int i = 0; i < 400; ++i) {
    auto answer = send(url, method, token, body);
    if (answer.status != 503 || answer.retry_after != "1") return answer;
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  FAIL("the signing keys were still being fetched after 10 s");
  return {};
}

const char* kCall =
    R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"classify_text","arguments":{"text":"an algebra question in mathematics"}}})";

json::object claims(const ProtectedServer& server, const test::JwtAuthorizationServer& as,
                    json::object extra = {}) {
  json::object c{{"iss", as.base()},
                 {"aud", server.resource},
                 {"sub", "router"},
                 {"exp", test::epoch_seconds(std::chrono::seconds(600))},
                 {"scope", "mcp classify"}};
  for (auto& [k, v] : extra) c[k] = v;
  return c;
}

client::Client oauth_client(const ProtectedServer& server, const std::string& id,
                            const std::string& secret) {
  transport::client::HttpClientOptions http;
  http.url = server.resource;
  http.oauth = auth::OAuthOptions{};
  http.oauth->grant = auth::OAuthOptions::Grant::client_credentials;
  http.oauth->client_id = id;
  http.oauth->client_secret = secret;
  http.oauth->require_https = false;  // 127.0.0.1
  client::ClientOptions options;
  options.request_timeout = std::chrono::seconds(10);
  return client::Client(transport::client::make_streamable_http_transport(http), options);
}

/// classify_text's category index ("class"; 0 = math in the default categories).
std::int64_t class_of(const json::object& result) {
  const auto text = result.at("content").as_array().at(0).at("text").as_string();
  return json::parse(text).at("class").to_number<std::int64_t>();
}

}  // namespace

TEST_CASE("jwt e2e: the project's OAuth client classifies through a JWT-protected server") {
  test::JwtAuthorizationServer as(test::TestKey::ec("as-ec-1"));
  ProtectedServer server(as);
  auto c = oauth_client(server, "router", "router-secret");
  c.connect();
  // The 401 asked for the default scope only; classify_text's 403 asked for "classify" too, and
  // the client stepped up.
  const auto result =
      c.call_tool("classify_text", json::object{{"text", "an algebra question in mathematics"}});
  const bool failed = result.contains("isError") && result.at("isError").as_bool();
  CHECK_FALSE(failed);
  CHECK(class_of(result) == 0);
  CHECK(as.issued() == 2);
  CHECK(as.last_scope() == "mcp classify");
  CHECK(c.list_tools().size() == 2);
  CHECK(as.issued() == 2);        // the stepped-up token serves every later call
  CHECK(as.jwks_fetches() == 1);  // the keys were fetched once and kept
  c.close();
}

TEST_CASE("jwt e2e: a client the server grants too little gets 403 insufficient_scope") {
  test::JwtAuthorizationServer as(test::TestKey::rsa("as-rsa-1"));
  ProtectedServer server(as);
  auto c = oauth_client(server, "reader", "reader-secret");
  c.connect();  // "mcp" suffices for initialize and tools/list
  CHECK(c.list_tools().size() == 2);
  CHECK_THROWS(
      c.call_tool("classify_text", json::object{{"text", "an algebra question in mathematics"}}));
  CHECK(as.last_scope() == "mcp");
  c.close();
}

TEST_CASE("jwt e2e: bad tokens get 401 with the challenge, missing scopes 403") {
  test::JwtAuthorizationServer as(test::TestKey::rsa("as-rsa-1"));
  ProtectedServer server(as);
  const auto key = as.signing_key();
  const std::string metadata = server.url("/.well-known/oauth-protected-resource/mcp");
  const std::string challenge = "Bearer resource_metadata=\"" + metadata + "\", scope=\"mcp\"";

  // No token: asked for one, told where to learn how.
  auto a = send(server.url("/mcp"), "POST", "", kCall);
  CHECK(a.status == 401);
  CHECK(a.www_authenticate == challenge);
  auto refused = [&](const std::string& token, const std::string& why) {
    CAPTURE(why);
    const auto answer = send(server.url("/mcp"), "POST", token, kCall);
    CHECK(answer.status == 401);
    CHECK(answer.www_authenticate ==
          challenge + ", error=\"invalid_token\", error_description=\"" + why + "\"");
    CHECK(answer.body.find("Unauthorized: " + why) != std::string::npos);
  };
  refused(test::sign_token(test::TestKey::rsa("as-rsa-1"), claims(server, as)),
          "the token's signature is invalid");
  refused(test::sign_token(
              key, claims(server, as, {{"exp", test::epoch_seconds(std::chrono::seconds(-3600))}})),
          "the token has expired");
  refused(test::sign_token(key, claims(server, as, {{"aud", "http://127.0.0.1:1/mcp"}})),
          "the token's audience is not this resource");
  refused(test::sign_token(key, claims(server, as, {{"iss", "http://127.0.0.1:1"}})),
          "the token's issuer is not the trusted authorization server");
  refused("not-a-jwt", "the token is not a JWT (three dot-separated parts)");
  refused(std::string(9'000, 'a'), "the token is longer than 8192 bytes");

  // A valid token without "classify": 403 on classify_text over each dialect, fine elsewhere.
  const std::string reader = test::sign_token(key, claims(server, as, {{"scope", "mcp"}}));
  const std::string step_up =
      "Bearer error=\"insufficient_scope\", scope=\"mcp classify\", "
      "resource_metadata=\"" +
      metadata + "\"";
  a = send(server.url("/mcp"), "POST", reader, kCall);
  CHECK(a.status == 403);
  CHECK(a.www_authenticate == step_up);
  CHECK(a.body.find("insufficient_scope") != std::string::npos);
  a = send(server.url("/mcp/tools/call"), "POST", reader,
           R"({"name":"classify_text","arguments":{"text":"an algebra question in mathematics"}})");
  CHECK(a.status == 403);
  CHECK(a.www_authenticate == step_up);
  a = send(server.url("/mcp/tools/call"), "POST", reader, R"({"name":"list_categories"})");
  CHECK(a.status == 200);
  // POST /classify answers what classify_text answers: it needs the same scopes.
  const std::string inputs = R"({"inputs":"an algebra question in mathematics"})";
  a = send(server.url("/classify"), "POST", reader, inputs);
  CHECK(a.status == 403);
  CHECK(a.www_authenticate == step_up);
  // A token without even the default scope is refused every method.
  const std::string none = test::sign_token(key, claims(server, as, {{"scope", ""}}));
  a = send(server.url("/mcp/tools/list"), "POST", none, "{}");
  CHECK(a.status == 403);
  CHECK(a.www_authenticate.starts_with("Bearer error=\"insufficient_scope\", scope=\"mcp\""));
  // The full token classifies (router dialect: no session needed).
  const std::string full = test::sign_token(key, claims(server, as));
  a = send(server.url("/mcp/tools/call"), "POST", full,
           R"({"name":"classify_text","arguments":{"text":"an algebra question in mathematics"}})");
  CHECK(a.status == 200);
  CHECK(class_of(json::parse(a.body).as_object()) == 0);
  a = send(server.url("/classify"), "POST", full, inputs);
  CHECK(a.status == 200);
  CHECK(json::parse(a.body).at(0).at("label") == "math");

  // /metrics needs a token too; /health says only "ok" without one; the metadata is open.
  CHECK(send(server.url("/metrics"), "GET", "").status == 401);
  CHECK(send(server.url("/metrics"), "GET", full).status == 200);
  CHECK(send(server.url("/health"), "GET", "").body == R"({"status":"ok"})");
  CHECK(send(server.url("/health"), "GET", full).body.find("uptime_seconds") != std::string::npos);
  for (const std::string path :
       {"/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"}) {
    CAPTURE(path);
    a = send(server.url(path), "GET", "");
    REQUIRE(a.status == 200);
    const auto doc = json::parse(a.body);
    CHECK(doc.at("resource") == json::value(server.resource));
    CHECK(doc.at("authorization_servers") == json::array{as.base().c_str()});
    CHECK(doc.at("scopes_supported") == json::array{"classify", "mcp"});
    CHECK(doc.at("bearer_methods_supported") == json::array{"header"});
  }
  CHECK(send(server.url("/.well-known/oauth-authorization-server"), "GET", "").status == 404);
}

TEST_CASE("jwt e2e: unknown kids refetch the keys at most once per interval, rotation works") {
  test::JwtAuthorizationServer as(test::TestKey::ec("old"));
  ProtectedServer server(as);
  const std::string call = R"({"name":"list_categories"})";
  const auto old_key = as.signing_key();
  CHECK(send(server.url("/mcp/tools/call"), "POST", test::sign_token(old_key, claims(server, as)),
             call)
            .status == 200);
  CHECK(as.jwks_fetches() == 1);
  // Made-up kids: one refetch per interval (1 s here), however many tokens.
  for (int i = 0; i < 5; ++i) {
    const auto fake = test::TestKey::ec("fake-" + std::to_string(i));
    CHECK(send_once_fetched(server.url("/mcp/tools/call"), "POST",
                            test::sign_token(fake, claims(server, as)), call)
              .status == 401);
  }
  CHECK(as.jwks_fetches() <= 2);
  // The authorization server rotates its key: once the interval has passed, the new kid is
  // fetched and accepted; the old key still verifies.
  // The first request with the new kid starts the refetch and is answered at once (503,
  // Retry-After: 1); its retry finds the key.
  as.rotate(test::TestKey::rsa("new"));
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  CHECK(send_once_fetched(server.url("/mcp/tools/call"), "POST",
                          test::sign_token(as.signing_key(), claims(server, as)), call)
            .status == 200);
  CHECK(send(server.url("/mcp/tools/call"), "POST", test::sign_token(old_key, claims(server, as)),
             call)
            .status == 200);
}

TEST_CASE("jwt e2e: a JWKS refetch holds no I/O thread: other connections are answered meanwhile") {
  test::JwtAuthorizationServer as(test::TestKey::ec("k"));
  // One I/O thread, and a JWKS host slower than the requests below wait (5 s): a fetch on the
  // I/O thread would hold every connection until the host answers.
  ProtectedServer server(as, "        jwks_timeout: 60\n    io_threads: 1\n");
  const std::string call = R"({"name":"list_categories"})";
  const auto good = test::sign_token(as.signing_key(), claims(server, as));
  CHECK(send(server.url("/mcp/tools/call"), "POST", good, call).status == 200);
  CHECK(as.jwks_fetches() == 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));  // jwks_refetch_interval: 1
  as.hold_jwks();
  const auto unknown = test::sign_token(test::TestKey::ec("unknown"), claims(server, as));
  Answer first;
  std::thread refetching(
      [&] { first = request(server.url("/mcp/tools/call"), "POST", unknown, call); });
  for (int i = 0; i < 1000 && as.jwks_fetches() < 2; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  CHECK(as.jwks_fetches() == 2);  // the refetch reached the host, which holds it
  // Meanwhile, on other connections: the probe, and a token whose key is known.
  const auto health = request(server.url("/health"), "GET", "");
  CHECK(health.error.empty());
  CHECK(health.status == 200);
  const auto known = request(server.url("/mcp/tools/call"), "POST", good, call);
  CHECK(known.error.empty());
  CHECK(known.status == 200);
  CHECK(as.jwks_answers() == 1);  // both answered while the host still held the refetch
  as.release_jwks();
  refetching.join();
  // The unknown kid's request was answered at once, not after the fetch.
  CHECK(first.status == 503);
  CHECK(first.retry_after == "1");
  CHECK(first.body.find("being fetched again") != std::string::npos);
  // Once the fetch ended, the kid is still unknown: 401.
  CHECK(send_once_fetched(server.url("/mcp/tools/call"), "POST", unknown, call).status == 401);
}

TEST_CASE("jwt e2e: static bearer tokens and JWTs together, and unreachable keys") {
  test::JwtAuthorizationServer as(test::TestKey::ec("k"));
  ::setenv("MCPCLASS_TEST_STATIC_TOKEN", "static-secret-token", 1);
  {
    ProtectedServer server(as, "      bearer_tokens: [\"${MCPCLASS_TEST_STATIC_TOKEN}\"]\n");
    CHECK(send(server.url("/mcp/tools/list"), "POST", "static-secret-token", "{}").status == 200);
    CHECK(send(server.url("/mcp/tools/list"), "POST",
               test::sign_token(as.signing_key(), claims(server, as)), "{}")
              .status == 200);
    CHECK(send(server.url("/mcp/tools/list"), "POST", "wrong", "{}").status == 401);
  }
  // Keys that cannot be fetched: 503, not a crash and not a pass.
  test::JwtAuthorizationServer other(test::TestKey::ec("k"));
  const auto doc = config::parse_config(fmt::format(R"(
server:
  http:
    auth:
      jwt:
        resource: http://127.0.0.1:1/mcp
        issuer: http://127.0.0.1:2
        jwks_url: http://127.0.0.1:{}/nothing-here
)",
                                                    free_port()));
  service::ClassificationService service(doc);
  auto options = service.http_options();
  options.port = 0;
  transport::server::HttpServer http(service.server(), options);
  http.start();
  const auto a = send("http://127.0.0.1:" + std::to_string(http.port()) + "/mcp/tools/list", "POST",
                      test::sign_token(other.signing_key(),
                                       {{"iss", "http://127.0.0.1:2"},
                                        {"aud", "http://127.0.0.1:1/mcp"},
                                        {"exp", test::epoch_seconds(std::chrono::seconds(60))}}),
                      "{}");
  CHECK(a.status == 503);
  CHECK(a.body.find("signing keys could not be fetched") != std::string::npos);
  http.stop();
  service.stop();
}

TEST_CASE("jwt e2e: JWT auth counts as authentication off loopback, bad options stop start()") {
  test::JwtAuthorizationServer as(test::TestKey::ec("k"));
  util::ThreadPool pool{1};
  auto server = server::Server::create({}, pool.executor());
  transport::server::HttpServerOptions options;
  options.host = "0.0.0.0";
  options.jwt.resource = "https://mcp.example/mcp";
  options.jwt.issuer = as.base();
  options.jwt.jwks_url = as.base() + "/jwks";
  {
    transport::server::HttpServer http(server, options);
    CHECK_NOTHROW(http.start());
    // Any Host is served (a token guards it), and the metadata is open.
    const auto a = send("http://127.0.0.1:" + std::to_string(http.port()) +
                            "/.well-known/oauth-protected-resource/mcp",
                        "GET", "");
    CHECK(a.status == 200);
    CHECK(json::parse(a.body).at("resource") == json::value("https://mcp.example/mcp"));
  }
  options.host = "127.0.0.1";
  options.jwt.jwks_url = "http://auth.example/jwks";
  transport::server::HttpServer http(server, options);
  CHECK_THROWS_WITH(http.start(),
                    "JWT: jwks_url must be https:// (http:// only to a loopback host)");
  pool.stop();
}
