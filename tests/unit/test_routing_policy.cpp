// The routing policy: the reference rules one by one, overrides, entropy mode, JSON round trip.
#include "mcpclass/classify/errors.hpp"
#include "mcpclass/classify/routing_policy.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace mcpclass::classify;

namespace {

CategorySet reference_set() {
  return CategorySet({{"math", "", "", {}, {}},
                      {"science", "", "", {}, {}},
                      {"technology", "", "", {}, {}},
                      {"history", "", "", {}, {}},
                      {"general", "", "", {}, {}}});
}

// A distribution whose maximum is `confidence` at `index`, the rest spread evenly.
std::vector<double> peaked(std::size_t index, double confidence, std::size_t n = 5) {
  std::vector<double> p(n, (1.0 - confidence) / static_cast<double>(n - 1));
  p[index] = confidence;
  return p;
}

RoutingDecision route(const RoutingPolicy& policy, const std::string& text, std::size_t index,
                      double confidence, const CategorySet& set = reference_set()) {
  const auto p = peaked(index, confidence, set.size());
  return policy.apply(text, set, index, p, confidence);
}

const std::string kLongWhy =
    "why does the value of this long and winding expression keep changing when I plug in all "
    "of these different numbers one after another";  // 24 words
const std::string kLongPlain =
    "the value of this long and winding expression keeps changing when I plug in all of these "
    "different numbers one after another today";  // 23 words, no marker

}  // namespace

TEST_CASE("routing policy: word counting matches str.split()") {
  CHECK(count_words("") == 0);
  CHECK(count_words("   ") == 0);
  CHECK(count_words("one") == 1);
  CHECK(count_words("  one \t two\nthree  ") == 3);
  CHECK(count_words(kLongWhy) == 24);
  CHECK(count_words(kLongPlain) == 23);
}

TEST_CASE("routing policy: the reference rules in order") {
  const RoutingPolicy policy;
  // Rule 1: > 20 words and a marker → true, even for math at high confidence.
  CHECK(route(policy, kLongWhy, 0, 0.95).use_reasoning);
  CHECK(route(policy, kLongWhy, 4, 0.95).use_reasoning);
  // Marker words are whole words: "show" does not contain the marker "how".
  CHECK_FALSE(route(policy, kLongPlain + " show", 4, 0.95).use_reasoning);
  CHECK(route(policy, kLongPlain + " HOW?", 4, 0.95).use_reasoning);
  // ... and need more than 20 words: 20 words with a marker fall through to later rules.
  const std::string twenty = "why a b c d e f g h i j k l m n o p q r s";
  REQUIRE(count_words(twenty) == 20);
  CHECK_FALSE(route(policy, twenty, 4, 0.95).use_reasoning);

  // Rule 2: math with fewer than 15 words → false, even at low confidence.
  CHECK_FALSE(route(policy, "What is 2 + 2?", 0, 0.3).use_reasoning);
  const std::string fifteen = "a b c d e f g h i j k l m n o";
  CHECK(route(policy, fifteen, 0, 0.3).use_reasoning);           // 15 words: rule 2 off, rule 4 on
  CHECK(route(policy, "What is 2 + 2?", 1, 0.3).use_reasoning);  // not math

  // Rule 3: confidence > 0.9 → false (strict).
  CHECK_FALSE(route(policy, "What is DNA?", 1, 0.95).use_reasoning);
  CHECK(route(policy, "What is DNA?", 1, 0.9).use_reasoning);
  // Rule 4: confidence < 0.6 → true; rule 5: otherwise → true.
  CHECK(route(policy, "What is DNA?", 1, 0.5).use_reasoning);
  CHECK(route(policy, "What is DNA?", 1, 0.75).use_reasoning);

  // The model is always the default in the reference policy.
  CHECK(route(policy, "What is DNA?", 1, 0.3).model == "openai/gpt-oss-20b");
  CHECK(route(policy, kLongWhy, 0, 0.99).model == "openai/gpt-oss-20b");
}

TEST_CASE("routing policy: per-category and low-confidence overrides") {
  const CategorySet set({{"math", "", "", std::string("math-model"), false},
                         {"science", "", "", {}, true},
                         {"general", "", "", {}, {}}});
  RoutingPolicy policy;
  policy.low_confidence.model = "big-model";

  // The category's flag wins over every rule.
  CHECK_FALSE(route(policy, kLongWhy, 0, 0.75, set).use_reasoning);
  CHECK(route(policy, "What is DNA?", 1, 0.99, set).use_reasoning);
  // Model: the category's, unless confidence is low and a low-confidence model is set.
  CHECK(route(policy, "x", 0, 0.75, set).model == "math-model");
  CHECK(route(policy, "x", 0, 0.5, set).model == "big-model");
  CHECK(route(policy, "x", 2, 0.75, set).model == "openai/gpt-oss-20b");
  CHECK(route(policy, "x", 2, 0.4, set).model == "big-model");

  // Rules can be re-tuned or disabled.
  RoutingPolicy custom;
  custom.default_model = "m";
  custom.high_confidence.enabled = false;
  custom.default_use_reasoning = false;
  custom.short_queries.clear();
  CHECK_FALSE(route(custom, "What is 2 + 2?", 0, 0.95).use_reasoning);
  CHECK(route(custom, "What is 2 + 2?", 0, 0.5).use_reasoning);  // low confidence
  CHECK(route(custom, "x", 0, 0.7).model == "m");
  custom.complex_query.more_than_words = 3;
  custom.complex_query.markers = {"please"};
  CHECK(route(custom, "compute this for me please", 0, 0.95).use_reasoning);
  CHECK_FALSE(route(custom, "compute this for me why", 0, 0.95).use_reasoning);
}

TEST_CASE("routing policy: out_of_scope sends text far from the training rows to its model") {
  RoutingPolicy policy = RoutingPolicy::from_json(boost::json::parse(
      R"({"low_confidence":{"model":"unsure-model"},"out_of_scope":{"below":0.2,"model":"general"}})"));
  CHECK(policy.out_of_scope.enabled);
  const auto probs = peaked(0, 0.95);
  const auto set = reference_set();
  // Confident and in scope: the category's model; confident but out of scope: the rule's.
  CHECK(policy.apply("x", set, 0, probs, 0.95, 0.6).model == "openai/gpt-oss-20b");
  CHECK(policy.apply("x", set, 0, probs, 0.95, 0.1).model == "general");
  // It wins over low confidence, and does nothing for classifiers without a score.
  CHECK(policy.apply("x", set, 0, peaked(0, 0.3), 0.3, 0.1).model == "general");
  CHECK(policy.apply("x", set, 0, peaked(0, 0.3), 0.3).model == "unsure-model");
  CHECK(policy.apply("x", set, 0, probs, 0.95).model == "openai/gpt-oss-20b");
  // Without its own model it sends to default_model, also past a category's model.
  policy.out_of_scope.model.reset();
  const CategorySet modelled({{"math", "", "", "math-model", {}}, {"general", "", "", {}, {}}});
  const std::vector<double> math{0.9, 0.1};
  CHECK(policy.apply("x", modelled, 0, math, 0.9, 0.05).model == "openai/gpt-oss-20b");
  CHECK(policy.apply("x", modelled, 0, math, 0.9, 0.5).model == "math-model");
  // make_classification carries the score into the result and the wire form (with
  // probabilities), and refuses one outside [0, 1].
  const auto c = make_classification("x", modelled, math, policy, 0.05);
  REQUIRE(c.in_scope.has_value());
  CHECK(c.model == "openai/gpt-oss-20b");
  CHECK(to_wire(c, true).at("in_scope").as_double() == doctest::Approx(0.05));
  CHECK_FALSE(to_wire(c, false).contains("in_scope"));
  CHECK_FALSE(to_wire(make_classification("x", modelled, math, policy), true).contains("in_scope"));
  CHECK_THROWS_AS(make_classification("x", modelled, math, policy, 1.5), InvalidClassification);
  // The reference policy has the rule off; `enabled: false` keeps it off.
  CHECK_FALSE(RoutingPolicy{}.out_of_scope_fires(0.0));
  CHECK_FALSE(RoutingPolicy::from_json(boost::json::parse(R"({"out_of_scope":{"enabled":false}})"))
                  .out_of_scope_fires(0.0));
}

TEST_CASE("routing policy: entropy mode takes use_reasoning from the decision") {
  const CategorySet set(
      {{"biology", "", "", {}, false}, {"physics", "", "", {}, true}, {"other", "", "", {}, {}}});
  RoutingPolicy policy;
  policy.reasoning = ReasoningSource::entropy;

  const std::vector<double> physics{0.02, 0.97, 0.01};
  auto r = policy.apply("a b", set, 1, physics, 0.97);
  CHECK(r.use_reasoning);  // physics flag, low uncertainty
  CHECK(r.decision.strategy == "trust_top_category");

  const std::vector<double> biology{0.97, 0.02, 0.01};
  r = policy.apply(kLongWhy, set, 0, biology, 0.97);
  CHECK_FALSE(r.use_reasoning);  // rule 1 would say true; entropy mode says biology's flag

  const std::vector<double> flat{0.34, 0.33, 0.33};
  r = policy.apply("a", set, 0, flat, 0.34);
  CHECK(r.use_reasoning);  // very high uncertainty → conservative default
  CHECK(r.decision.confidence == doctest::Approx(0.3));

  const std::vector<double> other{0.01, 0.01, 0.98};
  r = policy.apply("a", set, 2, other, 0.98);
  CHECK_FALSE(r.use_reasoning);
  CHECK(r.decision.reason == "category_not_in_reasoning_map");

  // In rules mode the decision is still reported.
  const RoutingPolicy rules;
  CHECK(rules.apply("a", set, 1, physics, 0.97).decision.reason ==
        "very_low_uncertainty_trust_classification");
}

TEST_CASE("routing policy: make_classification picks the argmax and fills everything") {
  const auto set = reference_set();
  const RoutingPolicy policy;
  auto c = make_classification("What is 2 + 2?", set, {2.0, 1.0, 1.0, 0.0, 0.0}, policy);
  CHECK(c.class_index == 0);
  CHECK(c.category == "math");
  CHECK(c.confidence == doctest::Approx(0.5));
  CHECK(c.probabilities[1] == doctest::Approx(0.25));
  CHECK(c.entropy == doctest::Approx(1.5));
  CHECK_FALSE(c.use_reasoning);  // math, short
  CHECK_NOTHROW(check_classification(c, set));

  c = make_classification("x", set, {0.1, 0.3, 0.3, 0.2, 0.1}, policy);
  CHECK(c.class_index == 1);  // tie → lower index

  CHECK_THROWS_AS(make_classification("x", set, {1.0}, policy), InvalidClassification);
  CHECK_THROWS_AS(make_classification("x", set, {0, 0, 0, 0, 0}, policy), InvalidClassification);
  CHECK_THROWS_AS(make_classification("x", set, {1, -1, 1, 0, 0}, policy), InvalidClassification);
}

TEST_CASE("routing policy: JSON round trip and strict parsing") {
  RoutingPolicy policy;
  policy.reasoning = ReasoningSource::entropy;
  policy.low_confidence.model = "big";
  policy.out_of_scope = {true, 0.05, "general"};
  policy.short_queries.push_back({"science", 5, true});
  const auto json = policy.to_json();
  const auto back = RoutingPolicy::from_json(json);
  CHECK(back.to_json() == json);
  CHECK(RoutingPolicy::from_json(boost::json::object{}).to_json() == RoutingPolicy{}.to_json());

  const auto bad = [](const char* text) {
    return RoutingPolicy::from_json(boost::json::parse(text));
  };
  CHECK_THROWS_WITH_AS(bad(R"({"reasoning":"dice"})"),
                       R"(routing.reasoning: expected "rules" or "entropy", got "dice")",
                       ConfigError);
  CHECK_THROWS_WITH_AS(bad(R"({"high_confidence":{"above":1.5}})"),
                       "routing.high_confidence.above: must be within [0, 1]", ConfigError);
  CHECK_THROWS_WITH_AS(bad(R"({"complex_query":{"markers":["why",3]}})"),
                       "routing.complex_query.markers[1]: expected string, got number",
                       ConfigError);
  CHECK_THROWS_WITH_AS(bad(R"({"low_confidence":{"treshold":0.5}})"),
                       "routing.low_confidence.treshold: unknown key", ConfigError);
  CHECK_THROWS_WITH_AS(bad(R"({"out_of_scope":{"treshold":0.5}})"),
                       "routing.out_of_scope.treshold: unknown key", ConfigError);
  CHECK_THROWS_WITH_AS(bad(R"({"out_of_scope":{"below":1.5}})"),
                       "routing.out_of_scope.below: must be within [0, 1]", ConfigError);
  CHECK_THROWS_WITH_AS(bad(R"({"out_of_scope":{"model":""}})"),
                       "routing.out_of_scope.model: must not be empty", ConfigError);
  CHECK_THROWS_WITH_AS(bad(R"({"short_queries":[{"fewer_than_words":3}]})"),
                       "routing.short_queries[0].category: required key is missing", ConfigError);

  RoutingPolicy unknown;
  unknown.short_queries = {{"poetry", 3, false}};
  CHECK_THROWS_WITH_AS(unknown.check_against(reference_set()),
                       "routing.short_queries[0].category: unknown category 'poetry'", ConfigError);
}
