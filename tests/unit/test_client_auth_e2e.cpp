// OAuth end to end: the remote classifier over the REST dialect, client credentials, against a
// real protected server process (tests/client/oauth_classifier_server.py, its own authorization
// server); and the `classifier.remote.auth` configuration.
#include "auth/oauth_session.hpp"
#include "mcpclass/auth/oauth.hpp"
#include "mcpclass/client/client.hpp"
#include "mcpclass/remote/remote_classifier.hpp"
#include "mcpclass/transport/client/http.hpp"
#include "net/http_client.hpp"

#include <doctest/doctest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <functional>
#include <string>

using namespace mcpclass;
namespace json = boost::json;

namespace {

/// The protected server as a child process; its port is the first line it prints.
class OAuthServer {
 public:
  explicit OAuthServer(const std::string& secret = "router-secret",
                       const std::string& expires_in = "3600",
                       const std::string& script = "oauth_classifier_server.py",
                       const std::string& mode = "") {
    int out[2];
    REQUIRE(::pipe(out) == 0);
    pid_ = ::fork();
    REQUIRE(pid_ >= 0);
    if (pid_ == 0) {
      ::dup2(out[1], STDOUT_FILENO);
      ::close(out[0]);
      ::close(out[1]);
      ::setenv("OAUTH_CLIENT_SECRET", secret.c_str(), 1);
      ::setenv("OAUTH_EXPIRES_IN", expires_in.c_str(), 1);
      ::setenv("MALICIOUS_MODE", mode.c_str(), 1);
      const std::string path = std::string(MCPCLASS_SOURCE_DIR) + "/tests/client/" + script;
      ::execlp("python3", "python3", path.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    ::close(out[1]);
    std::string line;
    pollfd pfd{out[0], POLLIN, 0};
    while (line.find('\n') == std::string::npos && ::poll(&pfd, 1, 10'000) > 0) {
      char buf[64];
      const auto n = ::read(out[0], buf, sizeof buf);
      if (n <= 0) break;
      line.append(buf, static_cast<std::size_t>(n));
    }
    ::close(out[0]);
    REQUIRE_MESSAGE(line.find('\n') != std::string::npos, "the OAuth server did not start");
    port_ = std::stoi(line);
  }
  ~OAuthServer() {
    ::kill(pid_, SIGTERM);
    ::waitpid(pid_, nullptr, 0);
  }
  OAuthServer(const OAuthServer&) = delete;
  OAuthServer& operator=(const OAuthServer&) = delete;

  std::string base() const { return "http://127.0.0.1:" + std::to_string(port_); }

  /// POSTs or GETs an admin path and returns the body.
  std::string admin(const std::string& method, const std::string& path) const {
    net::HttpEngine engine(std::chrono::seconds(5), "");
    net::HttpRequest req;
    req.method = method;
    req.target = path;
    req.timeout = std::chrono::seconds(5);
    auto r = engine.perform(net::parse_http_url(base() + path), std::move(req));
    engine.stop();
    REQUIRE(!r.error);
    return r.body;
  }
  json::object stats() const { return json::parse(admin("GET", "/stats")).as_object(); }

 private:
  pid_t pid_ = -1;
  int port_ = 0;
};

remote::RemoteClassifierOptions rest_options(const OAuthServer& server, const std::string& secret) {
  return remote::RemoteClassifierOptions::from_json(
      json::object{{"transport", "rest"},
                   {"url", server.base() + "/mcp"},
                   {"timeout", 5},
                   {"max_retries", 0},
                   {"auth", json::object{{"client_id", "router"}, {"client_secret", secret}}}});
}

}  // namespace

TEST_CASE("client.auth e2e: a remote classifier behind OAuth (client credentials, REST)") {
  OAuthServer server;
  remote::RemoteClassifier remote(rest_options(server, "router-secret"));
  CHECK(remote.classify("what is 2 + 2", {}).category == "math");
  auto stats = server.stats();
  CHECK(stats.at("issued").as_int64() == 1);    // one token served every call so far
  CHECK(stats.at("rejected").as_int64() == 1);  // only the very first, tokenless request

  // The server forgets the token (as when it expires): the next call gets a 401, a new token,
  // and its answer.
  server.admin("POST", "/admin/revoke");
  CHECK(remote.classify("and 3 + 3", {}).category == "math");
  stats = server.stats();
  CHECK(stats.at("issued").as_int64() == 2);
  CHECK(stats.at("rejected").as_int64() == 2);
}

TEST_CASE("client.auth e2e: an expired token is renewed before the request, without a 401") {
  OAuthServer server("router-secret", "0");  // every token is expired on arrival
  remote::RemoteClassifier remote(rest_options(server, "router-secret"));
  const auto before = server.stats();
  CHECK(before.at("rejected").as_int64() == 1);  // the first, tokenless request
  CHECK(remote.classify("what is 2 + 2", {}).category == "math");
  const auto after = server.stats();
  CHECK(after.at("rejected").as_int64() == 1);
  CHECK(after.at("issued").as_int64() > before.at("issued").as_int64());
}

TEST_CASE("client.auth e2e: an absurd expires_in (1e300 s) is a long-lived token, not UB") {
  OAuthServer server("router-secret", "1e300");
  remote::RemoteClassifier remote(rest_options(server, "router-secret"));
  CHECK(remote.classify("what is 2 + 2", {}).category == "math");
  CHECK(remote.classify("and 3 + 3", {}).category == "math");
  const auto stats = server.stats();
  CHECK(stats.at("issued").as_int64() == 1);  // never renewed as if it had expired
  CHECK(stats.at("rejected").as_int64() == 1);
}

TEST_CASE("client.auth e2e: credentials go only to the issuer the metadata was fetched for") {
  for (const std::string mode : {"endpoints", "issuer"}) {
    CAPTURE(mode);
    OAuthServer server("router-secret", "3600", "malicious_oauth_server.py", mode);
    auth::OAuthOptions options;
    options.grant = auth::OAuthOptions::Grant::client_credentials;
    options.client_id = "router";
    options.client_secret = "router-secret";
    auth::OAuthSession session(options, server.base() + "/mcp", std::chrono::seconds(5), "");
    const std::string challenge = "Bearer resource_metadata=\"" + server.base() +
                                  "/.well-known/oauth-protected-resource/mcp\"";
    CHECK_THROWS_WITH_AS(session.answer_challenge(401, challenge, ""),
                         doctest::Contains(mode == "endpoints" ? "is not on the issuer's origin"
                                                               : "names issuer "
                                                                 "'https://elsewhere.example'"),
                         auth::AuthorizationError);
    CHECK(json::parse(server.admin("GET", "/canary")).at("connections") == 0);
  }
  {  // An issuer the configuration does not list is refused before anything is asked of it.
    OAuthServer server("router-secret", "3600", "malicious_oauth_server.py", "endpoints");
    auth::OAuthOptions options;
    options.grant = auth::OAuthOptions::Grant::client_credentials;
    options.client_id = "router";
    options.client_secret = "router-secret";
    options.allowed_authorization_servers = {"https://auth.example"};
    auth::OAuthSession session(options, server.base() + "/mcp", std::chrono::seconds(5), "");
    CHECK_THROWS_WITH_AS(session.answer_challenge(401,
                                                  "Bearer resource_metadata=\"" + server.base() +
                                                      "/.well-known/oauth-protected-resource/mcp\"",
                                                  ""),
                         doctest::Contains("is not in allowed_authorization_servers"),
                         auth::AuthorizationError);
    CHECK(json::parse(server.admin("GET", "/canary")).at("connections") == 0);
  }
  // An issuer the configuration lists is trusted with endpoints elsewhere: the canary is asked.
  OAuthServer server("router-secret", "3600", "malicious_oauth_server.py", "endpoints");
  auth::OAuthOptions options;
  options.grant = auth::OAuthOptions::Grant::client_credentials;
  options.client_id = "router";
  options.client_secret = "router-secret";
  options.allowed_authorization_servers = {server.base()};
  auth::OAuthSession session(options, server.base() + "/mcp", std::chrono::seconds(5), "");
  CHECK_THROWS_AS(session.answer_challenge(401,
                                           "Bearer resource_metadata=\"" + server.base() +
                                               "/.well-known/oauth-protected-resource/mcp\"",
                                           ""),
                  auth::AuthorizationError);
  CHECK(json::parse(server.admin("GET", "/canary")).at("connections").as_int64() >= 1);
}

TEST_CASE("client.auth e2e: a wrong client secret fails with the server's error, not a hang") {
  OAuthServer server;
  try {
    remote::RemoteClassifier remote(rest_options(server, "wrong"));
    FAIL("the classifier connected with a wrong secret");
  } catch (const std::exception& e) {
    const std::string what = e.what();
    CHECK_MESSAGE(what.find("authorization failed at token request (HTTP 401): invalid_client - "
                            "unknown client or wrong secret") != std::string::npos,
                  what);
  }
  CHECK(server.stats().at("issued").as_int64() == 0);
}

TEST_CASE("client.auth e2e: the client throws AuthorizationError with the server's error") {
  OAuthServer server;
  transport::client::HttpClientOptions http;
  http.url = server.base() + "/mcp";
  http.oauth = auth::OAuthOptions{};
  http.oauth->grant = auth::OAuthOptions::Grant::client_credentials;
  http.oauth->client_id = "router";
  http.oauth->client_secret = "wrong";
  client::ClientOptions options;
  options.request_timeout = std::chrono::seconds(10);
  client::Client c(transport::client::make_rest_transport(http), options);
  try {
    c.connect();
    FAIL("connected with a wrong secret");
  } catch (const auth::AuthorizationError& e) {
    CHECK(e.step() == "token request");
    CHECK(e.status() == 401);
    CHECK(e.error() == "invalid_client");
    CHECK(e.description() == "unknown client or wrong secret");
  }
  CHECK_THROWS_WITH_AS(transport::client::make_legacy_sse_transport(http),
                       doctest::Contains("legacy HTTP+SSE transport does not support it"),
                       client::TransportError);
}

namespace {

/// A pre-registered confidential client with the authorization code grant; `authorize` is the
/// application's browser.
client::Client code_flow_client(const OAuthServer& server,
                                std::function<std::string(const std::string&)> authorize) {
  transport::client::HttpClientOptions http;
  http.url = server.base() + "/mcp";
  http.oauth = auth::OAuthOptions{};
  http.oauth->client_id = "router";
  http.oauth->client_secret = "router-secret";
  http.oauth->authorize = std::move(authorize);
  client::ClientOptions options;
  options.request_timeout = std::chrono::seconds(10);
  return client::Client(transport::client::make_rest_transport(http), options);
}

}  // namespace

TEST_CASE("client.auth e2e: authorization code through the application's callback, then refresh") {
  OAuthServer server;
  std::string seen_url;
  auto c = code_flow_client(server, [&](const std::string& url) {
    seen_url = url;
    return auth::headless_authorization(url);  // the "browser": the server approves at once
  });
  c.connect();
  CHECK(seen_url.starts_with(server.base() + "/authorize?response_type=code&client_id=router"));
  CHECK(seen_url.find("&code_challenge_method=S256&") != std::string::npos);
  CHECK(seen_url.find("&resource=http%3A%2F%2F127.0.0.1%3A") != std::string::npos);
  CHECK(seen_url.find("&scope=classify") != std::string::npos);  // from the challenge

  // The access token is gone: the refresh token buys a new one, no second authorization.
  seen_url.clear();
  server.admin("POST", "/admin/revoke");
  CHECK(c.list_tools().size() == 2);
  CHECK(seen_url.empty());
  CHECK(server.stats().at("refreshed").as_int64() == 1);
  c.close();
}

TEST_CASE("client.auth e2e: the callback's denial and a forged state fail the request") {
  OAuthServer server;
  auto denied = code_flow_client(server, [](const std::string&) {
    return std::string("http://127.0.0.1:8976/callback?error=access_denied&error_description=no");
  });
  try {
    denied.connect();
    FAIL("connected without approval");
  } catch (const auth::AuthorizationError& e) {
    CHECK(e.step() == "authorization");
    CHECK(e.error() == "access_denied");
    CHECK(e.description() == "no");
  }
  auto forged = code_flow_client(server, [](const std::string& url) {
    auto redirect = auth::headless_authorization(url);
    return redirect.substr(0, redirect.find("&state=")) + "&state=forged";
  });
  CHECK_THROWS_WITH_AS(forged.connect(), doctest::Contains("invalid_state"),
                       auth::AuthorizationError);
  CHECK(server.stats().at("issued").as_int64() == 0);
}

TEST_CASE("client.auth: classifier.remote.auth configuration") {
  auto error_of = [](const char* doc) {
    try {
      remote::RemoteClassifierOptions::from_json(json::parse(doc));
    } catch (const classify::ConfigError& e) {
      return e.path() + ": " + e.what();
    }
    return std::string("no error");
  };
  const auto o = remote::RemoteClassifierOptions::from_json(json::parse(R"({
      "url":"https://mcp.example/mcp",
      "auth":{"client_id":"r","client_secret":"${ROUTER_SECRET}","scope":"classify",
              "max_attempts":2,"token_endpoint_auth_method":"client_secret_post"}})"));
  REQUIRE(o.auth);
  CHECK(o.auth->grant == "client_credentials");
  CHECK(o.auth->max_attempts == 2);
  CHECK(o.to_json().at("auth").at("client_secret") == "${ROUTER_SECRET}");
  ::setenv("MCPCLASS_TEST_ROUTER_SECRET", "s3", 1);
  auto with_env = *o.auth;
  with_env.client_secret = "${MCPCLASS_TEST_ROUTER_SECRET}";
  const auto oauth = with_env.to_oauth(std::chrono::seconds(3));
  CHECK(oauth.client_secret == "s3");
  CHECK(oauth.grant == auth::OAuthOptions::Grant::client_credentials);
  CHECK(oauth.timeout == std::chrono::seconds(3));
  CHECK(oauth.require_https);
  with_env.require_https = false;
  CHECK_FALSE(with_env.to_oauth(std::chrono::seconds(3)).require_https);
  with_env.client_secret = "literal";
  CHECK(with_env.to_json().at("client_secret") == "***");
  const auto listed = remote::RemoteClassifierOptions::from_json(json::parse(R"({
      "url":"https://mcp.example/mcp",
      "auth":{"client_id":"r","client_secret":"s",
              "allowed_authorization_servers":["https://auth.example"]}})"));
  REQUIRE(listed.auth);
  CHECK(listed.auth->to_oauth(std::chrono::seconds(3)).allowed_authorization_servers ==
        std::vector<std::string>{"https://auth.example"});
  CHECK(listed.to_json().at("auth").at("allowed_authorization_servers") ==
        json::array{"https://auth.example"});
  CHECK(error_of(R"({"url":"http://x/mcp","auth":{"client_id":"r","client_secret":"s",
                     "allowed_authorization_servers":"https://auth.example"}})")
            .find("allowed_authorization_servers") != std::string::npos);

  CHECK(error_of(R"({"url":"http://x/mcp","auth":{"client_secret":"s"}})")
            .starts_with("classifier.remote.auth.client_id"));
  CHECK(error_of(R"({"url":"http://x/mcp","auth":{"client_id":"c"}})")
            .starts_with("classifier.remote.auth.client_secret"));
  CHECK(error_of(R"({"url":"http://x/mcp","auth":{"grant":"password","client_id":"c"}})")
            .starts_with("classifier.remote.auth.grant"));
  CHECK(error_of(R"({"url":"http://x/mcp","auth":{"client_id":"c","client_secret":"s",
                     "signing_algorithm":"HS256"}})")
            .starts_with("classifier.remote.auth.signing_algorithm"));
  CHECK(error_of(R"({"url":"http://x/mcp","auth":{"client_id":"c","client_secret":"s",
                     "max_attempts":0}})")
            .starts_with("classifier.remote.auth.max_attempts"));
  CHECK(error_of(R"({"url":"http://x/mcp","auth":{"client_id":"c","client_secret":"s",
                     "scpoe":"x"}})")
            .starts_with("classifier.remote.auth.scpoe"));
  CHECK(error_of(R"({"url":"http://x/sse","auth":{"client_id":"c","client_secret":"s"}})")
            .starts_with("classifier.remote.auth"));
  CHECK(error_of(R"({"command":"srv","auth":{"client_id":"c","client_secret":"s"}})")
            .starts_with("classifier.remote.auth"));
  CHECK(error_of(R"({"url":"http://x/mcp","auth":{"grant":"authorization_code"}})") == "no error");

  remote::RemoteAuthOptions missing_key;
  missing_key.private_key_file = "/nonexistent/key.pem";
  CHECK_THROWS_WITH_AS(missing_key.to_oauth(std::chrono::seconds(1)),
                       doctest::Contains("cannot read the private key file"),
                       classify::ConfigError);
}
