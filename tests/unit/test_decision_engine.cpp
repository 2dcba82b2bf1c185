// The semantic router's decisions: rule trees (AND, OR, NOT) over signals computed on first use,
// the priority and confidence strategies, and the `routing` section's reader.
#include "mcpclass/routing/decision_engine.hpp"
#include "mcpclass/util/config_error.hpp"

#include <doctest/doctest.h>
#include <boost/json.hpp>

#include <map>
#include <string>
#include <vector>

using namespace mcpclass::routing;
namespace json = boost::json;

namespace {

RouterSettings settings_of(std::string_view text) {
  json::parse_options deep;
  deep.max_depth = 256;  // the reader's own limit is the one under test
  auto routing = json::parse(text, {}, deep).as_object();
  return RouterSettings::take_from(routing);
}

// Signal values by "type:name"; every lookup is recorded, so a test sees what was computed.
struct Signals {
  std::map<std::string, SignalValue> values;
  std::vector<std::string> asked;

  SignalLookup lookup() {
    return [this](SignalType type, const std::string& name) {
      const auto key = std::string(to_string(type)) + ":" + name;
      asked.push_back(key);
      const auto it = values.find(key);
      return it == values.end() ? SignalValue{} : it->second;
    };
  }
};

const char* kSignals = R"("signals": {
  "keywords": [{"name": "a", "operator": "OR", "keywords": ["a"]},
               {"name": "b", "operator": "OR", "keywords": ["b"]},
               {"name": "c", "operator": "OR", "keywords": ["c"]}],
  "domains": [{"name": "math"}]})";

}  // namespace

TEST_CASE("rule trees combine signals with AND, OR and NOT and stop at the first answer") {
  const auto s = settings_of(std::string("{") + kSignals + R"(, "decisions": [
    {"name": "d", "modelRefs": [{"model": "m"}], "rules": {"operator": "AND", "conditions": [
      {"type": "keyword", "name": "a"},
      {"operator": "OR", "conditions": [{"type": "keyword", "name": "b"},
                                        {"type": "domain", "name": "math"}]},
      {"operator": "NOT", "conditions": [{"type": "keyword", "name": "c"}]}]}}]})");
  const auto& rule = s.decisions.at(0).rules;
  Signals sig;
  sig.values = {{"keyword:a", {true, 0.9}}, {"keyword:b", {true, 0.7}}};
  auto o = evaluate_rule(rule, sig.lookup());
  CHECK(o.matched);
  CHECK(o.confidence == doctest::Approx(0.7));  // AND: the lowest; NOT: 1
  // OR stopped at b: the domain (a classification) was never asked for.
  CHECK(sig.asked == std::vector<std::string>{"keyword:a", "keyword:b", "keyword:c"});

  sig.asked.clear();
  sig.values["keyword:a"] = {false, 0.0};
  CHECK_FALSE(evaluate_rule(rule, sig.lookup()).matched);
  CHECK(sig.asked == std::vector<std::string>{"keyword:a"});  // AND stopped at a

  sig.values = {{"keyword:a", {true, 1.0}}, {"keyword:b", {true, 1.0}}, {"keyword:c", {true, 1.0}}};
  CHECK_FALSE(evaluate_rule(rule, sig.lookup()).matched);  // NOT c
}

TEST_CASE("the priority strategy takes the first match and evaluates nothing after it") {
  const auto s = settings_of(std::string("{") + kSignals + R"(, "decisions": [
    {"name": "low", "priority": 1, "modelRefs": [{"model": "m"}], "rules": {"type": "keyword", "name": "a"}},
    {"name": "high", "priority": 9, "modelRefs": [{"model": "m"}], "rules": {"type": "keyword", "name": "b"}},
    {"name": "never", "priority": 5, "modelRefs": [{"model": "m"}], "rules": {"type": "domain", "name": "math"}}]})");
  Signals sig;
  sig.values = {{"keyword:a", {true, 1.0}}, {"keyword:b", {true, 0.5}}};
  auto c = choose_decision(s, sig.lookup());
  REQUIRE(c.decision != nullptr);
  CHECK(c.decision->name == "high");
  CHECK(sig.asked == std::vector<std::string>{"keyword:b"});
  REQUIRE(c.trace.size() == 3);
  CHECK(c.trace[0].name == "high");
  CHECK(c.trace[1].name == "never");
  CHECK_FALSE(c.trace[1].evaluated);

  // Exhaustive (the explanation) evaluates every decision and keeps the same choice.
  sig.asked.clear();
  c = choose_decision(s, sig.lookup(), true);
  CHECK(c.decision->name == "high");
  CHECK(sig.asked.size() == 3);
}

TEST_CASE("the confidence strategy takes the most confident match") {
  const auto s = settings_of(std::string("{\"strategy\": \"confidence\", ") + kSignals +
                             R"(, "decisions": [
    {"name": "high", "priority": 9, "modelRefs": [{"model": "m"}], "rules": {"type": "keyword", "name": "b"}},
    {"name": "low", "priority": 1, "modelRefs": [{"model": "m"}], "rules": {"type": "keyword", "name": "a"}}]})");
  Signals sig;
  sig.values = {{"keyword:a", {true, 0.95}}, {"keyword:b", {true, 0.5}}};
  const auto c = choose_decision(s, sig.lookup());
  REQUIRE(c.decision != nullptr);
  CHECK(c.decision->name == "low");
  CHECK(c.confidence == doctest::Approx(0.95));
  sig.values.clear();
  CHECK(choose_decision(s, sig.lookup()).decision == nullptr);
}

TEST_CASE("the routing reader names the key of each problem and round-trips") {
  auto error = [](std::string_view text) -> std::string {
    try {
      settings_of(text);
    } catch (const mcpclass::util::ConfigError& e) {
      return e.what();
    }
    return "";
  };
  CHECK(error(R"({"decisions": [{"name": "d", "modelRefs": [{"model": "m"}],
                 "rules": {"type": "keyword", "name": "x"}}]})")
            .find("routing.decisions[0].rules.name: no keyword signal is named 'x'") !=
        std::string::npos);
  CHECK(
      error(
          R"({"decisions": [{"name": "d", "modelRefs": [], "rules": {"type": "pii", "name": "x"}}]})")
          .find("routing.decisions[0].modelRefs: must name at least one model") !=
      std::string::npos);
  CHECK(error(R"({"signals": {"pii": [{"name": "p"}, {"name": "p"}]}})")
            .find("routing.signals.pii[1].name: 'p' is already the name of another entry") !=
        std::string::npos);
  CHECK(error(R"({"signals": {"jailbreak": [{"name": "j", "method": "classifier"}]}})")
            .find("routing.signals.jailbreak[0].classifier") != std::string::npos);
  CHECK(error(R"({"strategy": "random"})").find("routing.strategy: 'random' is not one of") !=
        std::string::npos);
  CHECK(error(R"({"signals": {"colours": []}})").find("routing.signals.colours") !=
        std::string::npos);
  std::string deep = R"({"type": "keyword", "name": "a"})";
  for (int i = 0; i < 40; ++i) deep = R"({"operator": "NOT", "conditions": [)" + deep + "]}";
  CHECK(error(std::string("{") + kSignals +
              R"(, "decisions": [{"name": "d", "modelRefs": [{"model": "m"}], "rules": )" + deep +
              "}]}")
            .find("nest more than 32 levels") != std::string::npos);

  const auto s = settings_of(std::string("{") + kSignals + R"(, "decisions": [
    {"name": "d", "priority": 3, "modelRefs": [{"model": "m", "use_reasoning": true, "lora_name": "l"}],
     "rules": {"operator": "OR", "conditions": [{"type": "keyword", "name": "a"}]},
     "plugins": [{"type": "pii", "configuration": {"action": "redact", "pii_types_allowed": ["EMAIL_ADDRESS"]}},
                 {"type": "jailbreak", "configuration": {"threshold": 0.4}},
                 {"type": "system_prompt", "configuration": {"system_prompt": "hi", "mode": "replace"}},
                 {"type": "header_mutation", "configuration": {"add": [{"name": "X-A", "value": "1"}], "delete": ["X-B"]}}]}]})");
  json::object out;
  s.to_json(out);
  auto again = RouterSettings::take_from(out);
  json::object twice;
  again.to_json(twice);
  CHECK(json::serialize(twice) == json::serialize([&] {
          json::object o;
          s.to_json(o);
          return o;
        }()));
  const auto& d = again.decisions.at(0);
  CHECK(d.pii_action == PiiAction::redact);
  CHECK(d.jailbreak_threshold == doctest::Approx(0.4));
  CHECK(d.system_prompt_replace);
  CHECK(d.headers.remove == std::vector<std::string>{"X-B"});
  CHECK(d.model_refs.at(0).lora_name == "l");
  CHECK(s.used_signals() == std::vector<std::string>{"keyword:a"});
}
