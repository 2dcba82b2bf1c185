// Backend pools of the routing proxy (docs/route.md, "Backend pools"): the weighted picker's
// exact split, the ejection state machine on an injected clock (no sleeps), the pool's cap on
// ejections, and the configuration's errors naming the key.
#include "mcpclass/config/config.hpp"
#include "route/backend_pool.hpp"
#include "route/endpoint_health.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <map>
#include <string>
#include <vector>

using namespace mcpclass;
using route::HealthClock;
using namespace std::chrono_literals;

namespace {

config::EndpointReliability policy(std::uint32_t failures, std::chrono::milliseconds base,
                                   std::chrono::milliseconds max, std::uint32_t percent = 50) {
  config::EndpointReliability p;
  p.consecutive_failures = failures;
  p.base_ejection_time = base;
  p.max_ejection_time = max;
  p.max_ejection_percent = percent;
  return p;
}

config::RouteUpstream pool_of(std::vector<std::uint32_t> weights,
                              const config::EndpointReliability& reliability) {
  config::RouteUpstream u;
  for (std::size_t i = 0; i < weights.size(); ++i)
    u.backend_refs.push_back({"e" + std::to_string(i),
                              "http://127.0.0.1:" + std::to_string(9 + i) + "/v1", "", weights[i]});
  u.reliability = reliability;
  return u;
}

std::string config_error(const std::string& yaml) {
  try {
    config::parse_config(yaml, config::Format::yaml);
  } catch (const config::ConfigError& e) {
    return e.what();
  }
  return "no error";
}

constexpr const char* kHead = R"(
categories: [{name: other, description: o, model: m}]
classifier: {kind: rules, fallback: other, rules: {}}
routing: {default_model: m}
)";

}  // namespace

TEST_CASE("weighted picker splits exactly by weight over every full round") {
  route::WeightedPicker picker({5, 1, 1});
  std::map<std::size_t, int> counts;
  std::vector<std::size_t> first_round;
  for (int i = 0; i < 7 * 1000; ++i) {
    const auto pick = picker.pick([](std::size_t) { return true; });
    ++counts[pick];
    if (i < 7) first_round.push_back(pick);
  }
  CHECK(counts[0] == 5000);
  CHECK(counts[1] == 1000);
  CHECK(counts[2] == 1000);
  // Smooth: the heavy endpoint's turns are spread over the round, not one burst of five.
  CHECK(first_round == std::vector<std::size_t>{0, 0, 1, 0, 2, 0, 0});
}

TEST_CASE("weighted picker skips ineligible endpoints and the rest share their turns") {
  route::WeightedPicker picker({3, 1, 1});
  std::map<std::size_t, int> counts;
  for (int i = 0; i < 400; ++i) ++counts[picker.pick([](std::size_t e) { return e != 0; })];
  CHECK(counts[0] == 0);
  CHECK(counts[1] == 200);
  CHECK(counts[2] == 200);
  CHECK(picker.pick([](std::size_t) { return false; }) == route::WeightedPicker::npos);
}

TEST_CASE("an endpoint is ejected after consecutive failures, for base times its ejections") {
  route::EndpointHealth h(policy(3, 10s, 25s));
  const auto t0 = HealthClock::time_point{} + 1000s;
  CHECK(h.available(t0));
  CHECK_FALSE(h.failed(t0));
  h.succeeded();  // a success between failures starts the count again
  CHECK_FALSE(h.failed(t0));
  CHECK_FALSE(h.failed(t0));
  REQUIRE(h.failed(t0));
  h.eject(t0);
  CHECK(h.ejections() == 1);
  CHECK_FALSE(h.available(t0 + 9999ms));
  CHECK_FALSE(h.failed(t0 + 5s));  // failures while ejected are not counted
  CHECK(h.available(t0 + 10s));
  // Second ejection: 2 x base; third: 3 x base capped at max_ejection_time.
  const auto t1 = t0 + 11s;
  for (int i = 0; i < 2; ++i) CHECK_FALSE(h.failed(t1));
  REQUIRE(h.failed(t1));
  h.eject(t1);
  CHECK(h.ejected_until() == t1 + 20s);
  const auto t2 = t1 + 21s;
  for (int i = 0; i < 2; ++i) CHECK_FALSE(h.failed(t2));
  REQUIRE(h.failed(t2));
  h.eject(t2);
  CHECK(h.ejected_until() == t2 + 25s);
  // A healthy spell of max_ejection_time forgives: back to one base.
  const auto t3 = h.ejected_until() + 25s;
  for (int i = 0; i < 2; ++i) CHECK_FALSE(h.failed(t3));
  REQUIRE(h.failed(t3));
  h.eject(t3);
  CHECK(h.ejected_until() == t3 + 10s);
  CHECK(h.ejections() == 4);
}

TEST_CASE("consecutive_5xx 0 never ejects") {
  route::EndpointHealth h(policy(0, 10s, 10s));
  for (int i = 0; i < 100; ++i) CHECK_FALSE(h.failed(HealthClock::time_point{} + 1s));
}

TEST_CASE("a pool ejects at most max_ejection_percent of its endpoints") {
  route::BackendPool pool(pool_of({1, 1, 1, 1}, policy(2, 30s, 30s, 50)), "route.models.m", 1, 0,
                          nullptr);
  const auto now = HealthClock::now();
  std::vector<route::Endpoint*> endpoints;
  std::vector<const route::Endpoint*> tried;
  for (int i = 0; i < 4; ++i) {
    endpoints.push_back(pool.pick(tried, now));
    tried.push_back(endpoints.back());
  }
  REQUIRE(pool.pick(tried, now) == nullptr);  // each tried once
  for (auto* e : endpoints) {
    pool.failed(*e, now);
    pool.failed(*e, now);
  }
  const auto stats = pool.stats(now);
  int ejected = 0;
  for (const auto& s : stats) ejected += s.ejected ? 1 : 0;
  CHECK(ejected == 2);  // 50% of four
  // Requests go only to the two left in rotation; at the end of the time all four are back.
  std::map<std::string, int> counts;
  for (int i = 0; i < 100; ++i) ++counts[pool.pick({}, now + 1s)->name];
  CHECK(counts.size() == 2);
  CHECK_FALSE(counts.contains("e0"));
  CHECK_FALSE(counts.contains("e1"));
  counts.clear();
  for (int i = 0; i < 100; ++i) ++counts[pool.pick({}, now + 30s)->name];
  CHECK(counts.size() == 4);
}

TEST_CASE("a pool of one endpoint keeps it at 50 percent and loses it at 100") {
  route::BackendPool kept(pool_of({1}, policy(1, 30s, 30s, 50)), "route.models.m", 1, 0, nullptr);
  const auto now = HealthClock::now();
  auto* e = kept.pick({}, now);
  kept.failed(*e, now);
  CHECK(kept.pick({}, now) == e);
  route::BackendPool lost(pool_of({1}, policy(1, 30s, 30s, 100)), "route.models.m", 1, 0, nullptr);
  lost.failed(*lost.pick({}, now), now);
  CHECK(lost.pick({}, now) == nullptr);
  CHECK(lost.stats(now)[0].ejections == 1);
  CHECK(lost.may_retry(1));
}

TEST_CASE("retry_count bounds the other endpoints a connect failure is retried on") {
  auto settings = pool_of({1, 1, 1}, policy(5, 30s, 30s));
  settings.reliability.retry_count = 1;
  route::BackendPool pool(settings, "route.models.m", 1, 0, nullptr);
  CHECK(pool.may_retry(1));
  CHECK_FALSE(pool.may_retry(2));
}

TEST_CASE("backend_refs errors name the key") {
  auto route = [](const std::string& model) {
    return std::string(kHead) + "route: {models: {m: " + model + "}}\n";
  };
  CHECK(config_error(route("{backend_refs: []}")) ==
        "route.models.m.backend_refs: must name at least one backend");
  CHECK(config_error(route("{backend_refs: [{base_url: 'http://a/v1', weight: 0}]}")) ==
        "route.models.m.backend_refs[0].weight: must be an integer within [1, 1000000]");
  CHECK(config_error(route("{backend_refs: [{base_url: 'http://a/v1', weight: -2}]}")) ==
        "route.models.m.backend_refs[0].weight: must be an integer within [1, 1000000]");
  CHECK(
      config_error(route("{base_url: 'http://a/v1', backend_refs: [{base_url: 'http://b/v1'}]}")) ==
      "route.models.m.backend_refs: give base_url or backend_refs, not both");
  CHECK(config_error(
            route("{backend_refs: [{base_url: 'http://a/v1'}, {base_url: 'http://a/v1'}]}")) ==
        "route.models.m.backend_refs[1].name: 'a' names another backend of this model");
  CHECK(
      config_error(route("{backend_refs: [{weight: 2}]}")) ==
      "route.models.m.backend_refs[0].base_url: required key is missing (or endpoint: host:port)");
  CHECK(config_error(route("{}")) ==
        "route.models.m.base_url: required key is missing (or backend_refs)");
  CHECK(
      config_error(route("{base_url: 'http://a/v1', reliability: {max_ejection_percent: 101}}")) ==
      "route.models.m.reliability.max_ejection_percent: must be within [0, 100]");
  CHECK(config_error(route("{base_url: 'http://a/v1', reliability: {base_ejection_time: 30x}}")) ==
        "route.models.m.reliability.base_ejection_time: '30x' is not a duration (seconds as a "
        "number, or \"30s\", \"250ms\", \"1m30s\")");
  CHECK(config_error(route("{base_url: 'http://a/v1', reliability: {retry_on: '5xx'}}")) ==
        "route.models.m.reliability.retry_on: '5xx' is not retried: only connect-failure and "
        "refused-stream (failures before the request was sent) are");
}

TEST_CASE("providers.models is the Semantic Router's spelling of route.models") {
  const auto c = config::parse_config(std::string(kHead) + R"(
providers:
  defaults: {reasoning_effort: medium}
  models:
    - name: m
      reasoning: {family: qwen3}
      provider_model_id: qwen3-8b-instruct
      api_format: openai
      reliability: {consecutive_5xx: 3, base_ejection_time: 1m30s, max_ejection_percent: 50,
                    health_check_path: /health, health_check_interval: 500ms, total_timeout: 60s}
      backend_refs:
        - {name: primary, endpoint: "127.0.0.1:8000", protocol: http, weight: 80,
           api_key_env: PRIMARY_KEY}
        - {name: secondary, base_url: "https://h.example/v1", weight: 20}
)",
                                      config::Format::yaml);
  REQUIRE(c.route);
  const auto& m = c.route->models.at("m");
  CHECK(m.upstream_model == "qwen3-8b-instruct");
  CHECK(m.reasoning == config::ReasoningStyle::vllm);
  CHECK(m.reasoning_effort == "medium");
  CHECK(m.timeout == 60s);
  CHECK(m.reliability.consecutive_failures == 3);
  CHECK(m.reliability.base_ejection_time == 90s);
  CHECK(m.reliability.health_check_interval == 500ms);
  REQUIRE(m.backend_refs.size() == 2);
  CHECK(m.backend_refs[0].base_url == "http://127.0.0.1:8000/v1");
  CHECK(m.backend_refs[0].api_key == "${PRIMARY_KEY}");
  CHECK(m.backend_refs[0].weight == 80);
  CHECK(m.backend_refs[1].name == "secondary");
  // The normalized document reads back the same.
  const auto again = config::config_from_json(c.to_json());
  CHECK(again.route->to_json() == c.route->to_json());

  auto providers = [](const std::string& model) {
    return std::string(kHead) + "providers: {models: [" + model + "]}\n";
  };
  CHECK(config_error(
            providers("{name: m, backend_refs: [{base_url: 'http://a/v1'}], pricing: {}}")) ==
        "providers.models[0].pricing: unknown key");
  CHECK(config_error(providers("{name: m, backend_refs: [{endpoint: 'a:1', weight: 0}]}")) ==
        "providers.models[0].backend_refs[0].weight: must be an integer within [1, 1000000]");
  CHECK(config_error(providers("{name: m}")) ==
        "providers.models[0].backend_refs: required key is missing");
  CHECK(config_error(providers("{name: m, backend_refs: [{endpoint: 'a:1'}], reliability: "
                               "{lb_policy: least_request}}")) ==
        "providers.models[0].reliability.lb_policy: 'least_request' is not one of round_robin, "
        "weighted_round_robin (endpoints take turns by weight)");
  CHECK(config_error(std::string(kHead) +
                     "providers: {models: [{name: m, backend_refs: [{endpoint: 'a:1'}]}]}\n"
                     "route: {models: {m: {base_url: 'http://a/v1'}}}\n") ==
        "route.models: the models are under providers.models: give route.models or "
        "providers.models, not both");
  CHECK(config_error(std::string(kHead) +
                     "providers: {models: [{name: x, backend_refs: [{endpoint: 'a:1'}]}]}\n") ==
        "providers.models: no upstream for model 'm' (routing.default_model chooses it)");
}
