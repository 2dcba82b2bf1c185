// route::SemanticCache without an encoder (the exact path) and with a fake one (the semantic
// path), its nearest-neighbour index, and the answers it keeps: bounds by bytes and entries (LRU),
// TTL, what is not stored, the scope of a query (model, system prompt, parameters, images), keys
// that are compared and not trusted (issue 47), SSE and JSON answers in and out.
#include "route/cache_index.hpp"
#include "route/cached_answer.hpp"
#include "route/semantic_cache.hpp"

#include <doctest/doctest.h>
#include <boost/json.hpp>

#include <cmath>
#include <stdexcept>
#include <string>

using namespace mcpclass::route;
namespace json = boost::json;
using Clock = SemanticCache::Clock;
using namespace std::chrono_literals;

namespace {

CacheQuery query_of(const std::string& text, const std::string& model = "m",
                    const std::string& system = "") {
  json::array messages;
  if (!system.empty()) messages.push_back(json::object{{"role", "system"}, {"content", system}});
  messages.push_back(json::object{{"role", "user"}, {"content", text}});
  auto q = cache_query(json::object{{"model", "auto"}, {"messages", messages}}, model,
                       mcpclass::config::RouteText::last_user);
  REQUIRE(q);
  return *q;
}

CachedAnswer answer(std::size_t bytes) {
  return {"up", std::string(bytes, 'a'), "stop"};
}

// Maps "deg:<angle>[ anything]" to the unit vector at that angle (degrees), so that a test
// chooses how similar two queries are.
class AngleEncoder : public mcpclass::learned::SentenceEncoder {
 public:
  std::size_t dimension() const override { return 2; }
  std::vector<float> encode(std::span<const std::string> texts,
                            const mcpclass::learned::EncodeProgress& = {}) const override {
    std::vector<float> out;
    for (const auto& t : texts) {
      const double a = std::stod(t.substr(4)) * 3.14159265358979 / 180;
      out.push_back(static_cast<float>(std::cos(a)));
      out.push_back(static_cast<float>(std::sin(a)));
    }
    return out;
  }
  std::vector<std::int32_t> token_ids(const std::string&) const override { return {}; }
  std::vector<float> encode_tokens(std::span<const std::vector<std::int32_t>>) const override {
    throw std::logic_error("unused");
  }
  std::size_t piece_count() const override { return 0; }
  std::string model_id() const override { return "angles"; }
};

mcpclass::config::SemanticCacheSettings bounded(std::size_t max_bytes, std::size_t entries = 100) {
  mcpclass::config::SemanticCacheSettings s;
  s.enabled = true;
  s.max_bytes = max_bytes;
  s.max_entries = entries;
  s.max_entry_bytes = 2000;
  return s;
}

}  // namespace

TEST_CASE("semantic cache: an exact repeat hits, within its scope only") {
  SemanticCache cache(bounded(1 << 20), nullptr);
  auto q = query_of("what is a monad");
  CHECK_FALSE(cache.lookup(q, 0.8));
  CHECK(cache.store(q, {"up", "a burrito", "stop"}, 60s));
  auto again = query_of("what is a monad");
  const auto hit = cache.lookup(again, 0.8);
  REQUIRE(hit);
  CHECK(hit->exact);
  CHECK(hit->answer.content == "a burrito");
  for (auto other :
       {query_of("what is a monad", "other-model"),
        query_of("what is a monad", "m", "You are a pirate."), query_of("what is a functor")})
    CHECK_FALSE(cache.lookup(other, 0.8));
}

TEST_CASE("semantic cache: least recently used entries go first beyond max_bytes") {
  // Each entry costs its answer plus the same overhead: measure it with one.
  SemanticCache probe(bounded(1 << 20), nullptr);
  auto q0 = query_of("q0");
  probe.store(q0, answer(1000), 60s);
  const std::size_t one = probe.bytes();
  SemanticCache cache(bounded(3 * one + one / 2), nullptr);
  auto t = Clock::now();
  std::vector<CacheQuery> qs;
  for (int i = 0; i < 3; ++i) {
    qs.push_back(query_of("q" + std::to_string(i)));
    CHECK(cache.store(qs.back(), answer(1000), 60s, t));
  }
  CHECK(cache.entries() == 3);
  CHECK(cache.bytes() <= 3 * one);
  CHECK(cache.lookup(qs[0], 0.8, t));  // q0 is now the most recently used
  auto q3 = query_of("q3");
  CHECK(cache.store(q3, answer(1000), 60s, t));
  CHECK(cache.entries() == 3);
  CHECK(cache.evictions() == 1);
  CHECK_FALSE(cache.lookup(qs[1], 0.8, t));  // the least recently used went
  CHECK(cache.lookup(qs[0], 0.8, t));
  CHECK(cache.lookup(q3, 0.8, t));
}

TEST_CASE("semantic cache: max_entries bounds the count and max_entry_bytes each answer") {
  SemanticCache cache(bounded(1 << 20, 2), nullptr);
  for (int i = 0; i < 5; ++i) cache.store(query_of("q" + std::to_string(i)), answer(10), 60s);
  CHECK(cache.entries() == 2);
  CHECK(cache.evictions() == 3);
  auto big = query_of("big");
  CHECK_FALSE(cache.store(big, answer(2001), 60s));
  CHECK_FALSE(cache.lookup(big, 0.8));
  CHECK(cache.prometheus().find("mcpclass_route_cache_skipped_total{reason=\"too_large\"} 1") !=
        std::string::npos);
}

TEST_CASE("semantic cache: an entry expires ttl after it was stored") {
  SemanticCache cache(bounded(1 << 20), nullptr);
  const auto t = Clock::now();
  auto q = query_of("what time is it");
  cache.store(q, answer(10), 30s, t);
  CHECK(cache.lookup(q, 0.8, t + 29s));
  CHECK_FALSE(cache.lookup(q, 0.8, t + 30s));
  CHECK(cache.entries() == 0);
  CHECK(cache.bytes() == 0);
}

TEST_CASE("semantic cache: later turns and several choices are not cacheable") {
  const auto text = mcpclass::config::RouteText::last_user;
  json::array turns{json::object{{"role", "user"}, {"content", "a"}},
                    json::object{{"role", "assistant"}, {"content", "b"}},
                    json::object{{"role", "user"}, {"content", "c"}}};
  CHECK_FALSE(cache_query(json::object{{"messages", turns}}, "m", text));
  json::array one{json::object{{"role", "user"}, {"content", "a"}}};
  CHECK_FALSE(cache_query(json::object{{"messages", one}, {"n", 2}}, "m", text));
  CHECK(cache_query(json::object{{"messages", one}, {"n", 1}}, "m", text));
  // Parameters that change the answer are part of the scope, streaming is not.
  const auto plain = cache_query(json::object{{"messages", one}}, "m", text);
  const auto streamed = cache_query(json::object{{"messages", one}, {"stream", true}}, "m", text);
  const auto hot = cache_query(json::object{{"messages", one}, {"temperature", 2}}, "m", text);
  CHECK(plain->exact == streamed->exact);
  CHECK(plain->exact != hot->exact);
}

TEST_CASE("cached answer: a complete SSE stream is assembled, an incomplete one refused") {
  const std::string chunk0 =
      R"(data: {"model":"up","choices":[{"index":0,"delta":{"role":"assistant","content":"Hel"},"finish_reason":null}]})"
      "\n\n";
  const std::string chunk1 =
      R"(data: {"model":"up","choices":[{"index":0,"delta":{"content":"lo"},"finish_reason":"stop"}]})"
      "\n\n";
  const auto done = chunk0 + chunk1 + "data: [DONE]\n\n";
  const auto a = answer_from_sse(done);
  REQUIRE(a);
  CHECK(a->content == "Hello");
  CHECK(a->model == "up");
  CHECK_FALSE(answer_from_sse(chunk0 + chunk1));              // no [DONE]
  CHECK_FALSE(answer_from_sse(chunk0 + "data: [DONE]\n\n"));  // no finish_reason
  const std::string tools =
      R"(data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0}]},"finish_reason":"tool_calls"}]})"
      "\n\ndata: [DONE]\n\n";
  CHECK_FALSE(answer_from_sse(tools));
  // Replayed as SSE, it reads back the same; as JSON, it is one chat.completion.
  const auto replay = answer_from_sse(answer_sse(*a, "id-1"));
  REQUIRE(replay);
  CHECK(replay->content == "Hello");
  const auto body = json::parse(answer_json(*a, "id-1")).as_object();
  CHECK(body.at("object") == "chat.completion");
  CHECK(body.at("choices").as_array()[0].at("message").at("content") == "Hello");
  CHECK(answer_from_json(answer_json(*a, "id-1"))->content == "Hello");
  CHECK_FALSE(answer_from_json(
      R"({"choices":[{"message":{"content":null,"tool_calls":[{}]},"finish_reason":"tool_calls"}]})"));
}

TEST_CASE("cache index: nearest live ids, removals skipped, stale after many removals") {
  CacheIndex index(2);
  auto unit = [](double angle) {
    return std::vector<float>{static_cast<float>(std::cos(angle)),
                              static_cast<float>(std::sin(angle))};
  };
  for (std::uint64_t id = 0; id < 10; ++id) index.add(id, unit(0.1 * double(id)));
  auto near = index.search(unit(0.0), 3);
  REQUIRE(near.size() == 3);
  CHECK(near[0].first == 0);
  CHECK(near[0].second == doctest::Approx(1.0).epsilon(1e-5));
  CHECK(near[1].first == 1);
  index.remove(0);
  near = index.search(unit(0.0), 1);
  REQUIRE(near.size() == 1);
  CHECK(near[0].first == 1);
  CHECK_FALSE(index.stale());
  CacheIndex churn(2);
  for (std::uint64_t id = 0; id < 3000; ++id) churn.add(id, unit(0.001 * double(id)));
  for (std::uint64_t id = 0; id < 2000; ++id) churn.remove(id);
#if MCPCLASS_WITH_LEARNED
  CHECK(churn.stale());  // hnswlib only marks removed entries deleted
#else
  CHECK_FALSE(churn.stale());  // without the learned component the index is a map: freed at once
#endif
  churn.clear();
  CHECK_FALSE(churn.stale());
  CHECK(churn.search(unit(0.0), 1).empty());
}

TEST_CASE("semantic cache: a user message's images are part of the scope") {
  auto with_image = [](const std::string& url) {
    json::array content{
        json::object{{"type", "text"}, {"text", "What is in this image?"}},
        json::object{{"type", "image_url"}, {"image_url", json::object{{"url", url}}}}};
    json::array messages{json::object{{"role", "user"}, {"content", content}}};
    auto q = cache_query(json::object{{"messages", messages}}, "m",
                         mcpclass::config::RouteText::last_user);
    REQUIRE(q);
    return *q;
  };
  auto a = with_image("https://example.com/cat.png");
  auto b = with_image("https://example.com/dog.png");
  CHECK(a.text == b.text);
  CHECK(a.scope != b.scope);
  CHECK(a.exact != b.exact);
  SemanticCache cache(bounded(1 << 20), nullptr);
  CHECK(cache.store(a, {"up", "a cat", "stop"}, 60s));
  CHECK_FALSE(cache.lookup(b, 0.8));
  CHECK(cache.lookup(a, 0.8));
}

TEST_CASE("semantic cache: keys are SHA-256 and a hit compares the stored scope and text") {
  const auto q = query_of("What is the capital of France?");
  CHECK(q.scope.size() == 64);
  CHECK(q.exact.size() == 64);
  CHECK(q.exact == exact_key(q.scope, q.text));
  SemanticCache cache(bounded(1 << 20), nullptr);
  auto attacker = query_of("Reply with exactly: The capital of France is Berlin");
  // A collision of the keys, forced: the attacker's entry sits under the victim's key.
  attacker.exact = q.exact;
  CHECK(cache.store(attacker, {"up", "Berlin", "stop"}, 60s));
  auto victim = query_of("What is the capital of France?");
  CHECK_FALSE(cache.lookup(victim, 0.8));
  auto other_scope = query_of("What is the capital of France?", "m", "You are a pirate.");
  other_scope.exact = q.exact;
  CHECK_FALSE(cache.lookup(other_scope, 0.8));
}

TEST_CASE("semantic cache: an entry read from Redis is checked before it is trusted") {
  const auto q = query_of("deg:0 what is a monad");
  RedisLink::Entry e{q.scope, q.exact, q.text, {1.0f, 0.0f}, {"up", "a burrito", "stop"}, 60s};
  CHECK(trusted_entry(e, 2));
  auto no_embedding = e;
  no_embedding.embedding.clear();
  CHECK(trusted_entry(no_embedding, 2));
  auto nan = e;
  nan.embedding = {std::nanf(""), 0.0f};
  CHECK_FALSE(trusted_entry(nan, 2));
  auto long_vector = e;
  long_vector.embedding = {3.0f, 4.0f};
  CHECK_FALSE(trusted_entry(long_vector, 2));
  auto wrong_size = e;
  wrong_size.embedding = {1.0f, 0.0f, 0.0f};
  CHECK_FALSE(trusted_entry(wrong_size, 2));
  auto elsewhere = e;  // stored under a key that is not its scope's and text's
  elsewhere.text = "what is a functor";
  CHECK_FALSE(trusted_entry(elsewhere, 2));
  auto other_scope = e;
  other_scope.scope = query_of("deg:0 what is a monad", "other").scope;
  CHECK_FALSE(trusted_entry(other_scope, 2));
  auto expired = e;
  expired.ttl = 0ms;
  CHECK_FALSE(trusted_entry(expired, 2));
}

TEST_CASE("semantic cache: near-duplicates of other scopes do not hide a hit of the query's") {
  SemanticCache cache(bounded(1 << 20), std::make_shared<AngleEncoder>());
  // Twenty entries of other models at the query's very embedding, one of its own model a
  // little farther (cos 5 degrees = 0.996).
  for (int i = 0; i < 20; ++i) {
    auto other = query_of("deg:0 other " + std::to_string(i), "model-" + std::to_string(i));
    REQUIRE_FALSE(cache.lookup(other, 0.9));  // embeds it
    REQUIRE(cache.store(other, {"up", "not yours", "stop"}, 60s));
  }
  auto own = query_of("deg:5 mine", "m");
  REQUIRE_FALSE(cache.lookup(own, 0.9));
  REQUIRE(cache.store(own, {"up", "yours", "stop"}, 60s));
  auto query = query_of("deg:0 a paraphrase of mine", "m");
  const auto hit = cache.lookup(query, 0.9);
  REQUIRE(hit);
  CHECK_FALSE(hit->exact);
  CHECK(hit->answer.content == "yours");
  // Below the threshold, nothing of its scope: a miss, however many others are near.
  auto far = query_of("deg:60 unrelated", "m");
  CHECK_FALSE(cache.lookup(far, 0.9));
}
