// route::RedisConnection's own transport (issue 47: TLS without hiredis_ssl) against real
// sockets on 127.0.0.1 that are not Redis: a peer that never answers (the TLS handshake and a
// command time out by their deadlines), one that closes, one that answers what is not RESP, one
// that is not TLS; and the `redis.tls` settings. A real redis-server, plain and TLS, is
// tests/route/test_route_redis.py's.
#include "mcpclass/config/semantic_cache_settings.hpp"
#include "mcpclass/util/config_error.hpp"
#include "net/tls_context.hpp"
#include "route/redis_connection.hpp"

#include <doctest/doctest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include <boost/json.hpp>

#include <chrono>
#include <string>
#include <thread>

using namespace mcpclass::route;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

// A listening socket on 127.0.0.1: connections complete in the kernel's backlog whether or not
// anyone accepts them.
class Listener {
 public:
  Listener() {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0);
    REQUIRE(::listen(fd_, 8) == 0);
    socklen_t len = sizeof(a);
    REQUIRE(::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) == 0);
    port_ = ntohs(a.sin_port);
  }
  ~Listener() { ::close(fd_); }
  Listener(const Listener&) = delete;
  Listener& operator=(const Listener&) = delete;

  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  /// Accepts one connection, reads what comes within a moment, answers `reply` and closes.
  std::thread answer_once(std::string reply) {
    return std::thread([this, reply = std::move(reply)] {
      const int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) return;
      char buffer[4096];
      const timeval tv{0, 200'000};
      ::setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
      [[maybe_unused]] const auto got = ::recv(c, buffer, sizeof(buffer), 0);
      if (!reply.empty()) [[maybe_unused]]
        const auto sent = ::send(c, reply.data(), reply.size(), 0);
      ::close(c);
    });
  }

 private:
  int fd_ = -1;
  int port_ = 0;
};

RedisTarget target(const std::string& address, bool tls = false) {
  RedisTarget t;
  t.address = address;
  t.connect_timeout = 150ms;
  if (tls) {
    auto context = mcpclass::net::make_client_tls_context("");
    t.tls = std::shared_ptr<ssl_ctx_st>(context, context->native_handle());
    t.server_name = "127.0.0.1";
  }
  return t;
}

}  // namespace

TEST_CASE("redis connection: a peer that never answers times out by the deadlines") {
  Listener silent;
  SUBCASE("the TLS handshake, within connect_timeout") {
    const auto t = target(silent.address(), true);
    RedisConnection c(t, 100ms);
    const auto t0 = Clock::now();
    CHECK_FALSE(c.connect());
    const auto took = Clock::now() - t0;
    CHECK(c.error() == "TLS handshake: timed out");
    CHECK_FALSE(c.connected());
    CHECK(took >= 140ms);
    CHECK(took < 1s);
  }
  SUBCASE("a command, within the timeout") {
    const auto t = target(silent.address());
    RedisConnection c(t, 100ms);
    const auto t0 = Clock::now();
    CHECK(c.command({"PING"}) == nullptr);
    const auto took = Clock::now() - t0;
    CHECK(c.error() == "read: timed out");
    CHECK_FALSE(c.connected());
    CHECK(took >= 90ms);
    CHECK(took < 1s);
  }
}

TEST_CASE("redis connection: a closed, a non-RESP and a non-TLS peer fail in their own words") {
  Listener peer;
  SUBCASE("closed before its reply") {
    auto th = peer.answer_once("");
    const auto t = target(peer.address());
    RedisConnection c(t, 1s);
    CHECK(c.command({"PING"}) == nullptr);
    th.join();
    CHECK(c.error() == "Server closed the connection");
    CHECK_FALSE(c.connected());
  }
  SUBCASE("not RESP") {
    auto th = peer.answer_once("hello\r\n");
    const auto t = target(peer.address());
    RedisConnection c(t, 1s);
    CHECK(c.command({"PING"}) == nullptr);
    th.join();
    CHECK(c.error().starts_with("protocol error: "));
    CHECK_FALSE(c.connected());
  }
  SUBCASE("a RESP error reply names the command") {
    auto th = peer.answer_once("-NOAUTH Authentication required.\r\n");
    const auto t = target(peer.address());
    RedisConnection c(t, 1s);
    CHECK(c.command({"GET", "k"}) == nullptr);
    th.join();
    CHECK(c.error() == "GET: NOAUTH Authentication required.");
  }
  SUBCASE("a plain peer under TLS") {
    auto th = peer.answer_once("-ERR not TLS\r\n");
    const auto t = target(peer.address(), true);
    RedisConnection c(t, 1s);
    CHECK_FALSE(c.connect());
    th.join();
    CHECK(c.error().starts_with("TLS handshake with 127.0.0.1 failed: "));
    CHECK_FALSE(c.connected());
  }
  SUBCASE("no one listening") {
    const auto t = target("127.0.0.1:1");
    RedisConnection c(t, 1s);
    CHECK_FALSE(c.connect());
    CHECK(c.error() == "connect: Connection refused");
  }
}

TEST_CASE("redis settings: the tls section") {
  using mcpclass::config::RedisCacheSettings;
  const auto parse = [](const char* text) {
    return RedisCacheSettings::from_json(boost::json::parse(text), "r", {});
  };
  CHECK_FALSE(parse("{}").tls.enabled);
  const auto s = parse(
      R"({"address": "redis.internal:6380", "tls": {"ca_file": "ca.pem", "cert_file": "c.pem",
          "key_file": "c.key", "server_name": "redis.internal"}})");
  CHECK(s.tls.enabled);
  CHECK(s.tls.ca_file == "ca.pem");
  CHECK(s.tls.server_name == "redis.internal");
  CHECK(RedisCacheSettings::from_json(s.to_json(), "r", {}) == s);
  CHECK_FALSE(parse(R"({"tls": {"enabled": false}})").tls.enabled);
  CHECK_THROWS_WITH_AS(parse(R"({"tls": {"key_file": "k"}})"),
                       "r.tls: needs both cert_file and key_file (or neither)",
                       mcpclass::util::ConfigError);
  CHECK_THROWS_AS(parse(R"({"address": "/run/redis.sock", "tls": {}})"),
                  mcpclass::util::ConfigError);
  CHECK(parse(R"({"address": "/run/redis.sock", "tls": {"server_name": "r"}})").tls.enabled);
}
