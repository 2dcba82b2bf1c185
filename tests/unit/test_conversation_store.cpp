// route::ConversationStore: kept decisions as the fleet shares them (the JSON value in Redis and
// what is refused of it), and the store linked to a Redis that is not there: every kept decision
// is still found in memory, and the failures are counted. (A live Redis: tests/route
// test_route_conversations.)
#include "route/conversation_store.hpp"

#include <doctest/doctest.h>
#include <boost/json.hpp>

#include <map>
#include <string>

using namespace mcpclass::route;

namespace {

mcpclass::config::ConversationSettings redis_settings() {
  mcpclass::config::ConversationSettings s;
  s.enabled = true;
  s.backend_type = "redis";
  s.redis.address = "/nonexistent/mcpclass-test-redis.sock";
  s.redis.connect_timeout = std::chrono::milliseconds(50);
  s.redis.timeout = std::chrono::milliseconds(50);
  return s;
}

double metric(const std::string& text, const std::string& series) {
  const auto at = text.find("\n" + series + " ");
  REQUIRE(at != std::string::npos);
  return std::stod(text.substr(at + series.size() + 2));
}

}  // namespace

TEST_CASE("a shared kept decision reads back as it was written") {
  const KeptDecision d{"urgent", "m-openai", "math", 0.75, true};
  const auto back = parse_shared_decision(shared_decision("h:s", d), "h:s");
  REQUIRE(back);
  CHECK(back->decision == "urgent");
  CHECK(back->model == "m-openai");
  CHECK(back->category == "math");
  CHECK(back->confidence == doctest::Approx(0.75));
  CHECK(back->use_reasoning);
  // Under another conversation's key (a colliding hash), it is not that conversation's.
  CHECK_FALSE(parse_shared_decision(shared_decision("h:s", d), "h:t"));
}

TEST_CASE("a shared value that is not a kept decision is refused") {
  CHECK_FALSE(parse_shared_decision("", "k"));
  CHECK_FALSE(parse_shared_decision("not json", "k"));
  CHECK_FALSE(parse_shared_decision("[1, 2]", "k"));
  CHECK_FALSE(parse_shared_decision(R"({"model": 7})", "k"));
  // A member missing, an empty model, a mistyped confidence or switch, another conversation's.
  CHECK_FALSE(parse_shared_decision(
      R"({"key": "k", "decision": "", "model": "m", "category": "", "confidence": 1})", "k"));
  CHECK_FALSE(parse_shared_decision(
      R"({"key": "k", "decision": "", "model": "", "category": "", "confidence": 1, )"
      R"("use_reasoning": false})",
      "k"));
  CHECK_FALSE(parse_shared_decision(
      R"({"key": "k", "decision": "", "model": "m", "category": "", "confidence": "1", )"
      R"("use_reasoning": false})",
      "k"));
  CHECK_FALSE(parse_shared_decision(
      R"({"key": "k", "decision": "", "model": "m", "category": "", "confidence": 1, )"
      R"("use_reasoning": 0})",
      "k"));
  CHECK_FALSE(parse_shared_decision(
      R"({"decision": "", "model": "m", "category": "", "confidence": 1, "use_reasoning": false})",
      "k"));
  // Beyond the bound, even when it would parse.
  const std::string padded =
      R"({"key": "k", "decision": "", "model": "m", "category": "", "confidence": 1, )"
      R"("use_reasoning": false, "pad": ")" +
      std::string(kSharedDecisionBytes, 'x') + "\"}";
  CHECK_FALSE(parse_shared_decision(padded, "k"));
  CHECK(parse_shared_decision(
      R"({"key": "k", "decision": "", "model": "m", "category": "", "confidence": 1, )"
      R"("use_reasoning": false})",
      "k"));
}

TEST_CASE("a store linked to an unreachable Redis keeps its decisions in memory and counts") {
  ConversationStore store;
  const auto s = redis_settings();
  store.share(s);
  CHECK(store.shared());
  store.keep("h:a", KeptDecision{"", "m-openai", "math", 0.9, true}, s);
  const auto kept = store.find("h:a");
  REQUIRE(kept);
  CHECK(kept->model == "m-openai");
  CHECK_FALSE(store.find("h:other"));
  const auto text = store.prometheus();
  CHECK(metric(text, R"(mcpclass_route_conversation_shared_lookups_total{result="failed"})") == 2);
  CHECK(metric(text, R"(mcpclass_route_conversation_errors_total{part="redis"})") >= 1);
  // Back to memory: no link, the counts stay.
  auto memory = s;
  memory.backend_type = "memory";
  store.share(memory);
  CHECK_FALSE(store.shared());
  CHECK(store.find("h:a"));
  CHECK(metric(store.prometheus(), R"(mcpclass_route_conversation_errors_total{part="redis"})") >=
        1);
}

TEST_CASE("a derived conversation key is scoped to its caller, a named one is not") {
  mcpclass::config::ConversationSettings s;
  s.caller_header = "x-user-id";
  const auto request = boost::json::parse(
                           R"({"messages":[{"role":"system","content":"be brief"},
                                           {"role":"user","content":"hi there"}]})")
                           .as_object();
  const auto key = [&](std::map<std::string, std::string> headers, std::string address) {
    return conversation_key(
        request, s,
        [&](std::string_view name) -> std::string_view {
          const auto it = headers.find(std::string(name));
          return it == headers.end() ? std::string_view() : std::string_view(it->second);
        },
        address);
  };
  const std::string alone = key({}, "127.0.0.1");
  CHECK(alone.rfind("p:", 0) == 0);
  CHECK(alone == key({}, "127.0.0.1"));
  CHECK(alone != key({}, "127.0.0.2"));
  // The token's digest, whatever the address; the caller header over the token.
  const std::string token_a = key({{"authorization", "Bearer a"}}, "127.0.0.1");
  CHECK(token_a == key({{"authorization", "Bearer a"}}, "10.0.0.9"));
  CHECK(token_a != key({{"authorization", "Bearer b"}}, "127.0.0.1"));
  CHECK(token_a != alone);
  CHECK(key({{"authorization", "Bearer a"}, {"x-user-id", "u1"}}, "127.0.0.1") ==
        key({{"authorization", "Bearer b"}, {"x-user-id", "u1"}}, "127.0.0.2"));
  CHECK(key({{"x-user-id", "u1"}}, "127.0.0.1") != key({{"x-user-id", "u2"}}, "127.0.0.1"));
  // The token is not kept in the key (it may be written to Redis).
  CHECK(caller_key(
            s,
            [](std::string_view n) -> std::string_view {
              return n == "authorization" ? "Bearer secret" : "";
            },
            "127.0.0.1")
            .find("secret") == std::string::npos);
  // A session header or metadata names the conversation as the client says.
  CHECK(key({{"x-session-id", "s1"}}, "127.0.0.1") == "h:s1");
  CHECK(key({{"x-session-id", "s1"}, {"authorization", "Bearer b"}}, "127.0.0.2") == "h:s1");
}
