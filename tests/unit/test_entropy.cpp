// Entropy and the reasoning decision against the reference vectors (reference.md §4).
#include "mcpclass/classify/entropy.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace mcpclass::classify;

namespace {

const ReasoningFlags kFlags{{"biology", false}, {"chemistry", false}, {"law", false},
                            {"other", false},   {"physics", true},    {"business", true}};

struct Vector {
  std::vector<std::string> names;
  std::vector<double> probabilities;
  double entropy;
  double normalized;
  UncertaintyLevel level;
  bool use_reasoning;
  double confidence;
};

}  // namespace

TEST_CASE("entropy: reference vectors") {
  const std::vector<Vector> vectors{
      {{"biology", "chemistry", "physics", "law", "business", "other"},
       {.85, .05, .03, .03, .02, .02},
       0.9447,
       0.3655,
       UncertaintyLevel::low,
       false,
       0.765},
      {{"biology", "chemistry", "physics", "law", "business", "other"},
       {.17, .17, .17, .17, .16, .16},
       2.5844,
       0.9998,
       UncertaintyLevel::very_high,
       true,
       0.3},
      {{"biology", "chemistry", "physics", "law", "business", "other"},
       {.45, .40, .10, .03, .01, .01},
       1.6640,
       0.6437,
       UncertaintyLevel::high,
       false,
       1.0},
      {{"physics", "biology", "chemistry", "law", "business", "other"},
       {.90, .04, .02, .02, .01, .01},
       0.6812,
       0.2635,
       UncertaintyLevel::low,
       true,
       0.81},
      {{"other", "biology", "chemistry", "physics", "law", "business"},
       {.70, .15, .10, .03, .01, .01},
       1.3876,
       0.5368,
       UncertaintyLevel::medium,
       false,
       0.56},
  };
  for (const auto& v : vectors) {
    CAPTURE(v.names.front());
    CAPTURE(v.probabilities.front());
    CHECK(shannon_entropy(v.probabilities) == doctest::Approx(v.entropy).epsilon(1e-4));
    CHECK(normalized_entropy(v.probabilities) == doctest::Approx(v.normalized).epsilon(1e-3));
    CHECK(uncertainty_level(normalized_entropy(v.probabilities)) == v.level);
    const auto d = make_reasoning_decision(v.probabilities, v.names, kFlags, 0.6);
    CHECK(d.use_reasoning == v.use_reasoning);
    CHECK(d.confidence == doctest::Approx(v.confidence));
  }
}

TEST_CASE("entropy: reasons and strategies of the reference vectors") {
  const std::vector<std::string> names{"biology", "chemistry", "physics",
                                       "law",     "business",  "other"};
  auto d = make_reasoning_decision(std::vector<double>{.85, .05, .03, .03, .02, .02}, names, kFlags,
                                   0.6);
  CHECK(d.reason == "low_uncertainty_trust_classification");
  CHECK(d.strategy == "trust_top_category");

  d = make_reasoning_decision(std::vector<double>{.17, .17, .17, .17, .16, .16}, names, kFlags,
                              0.6);
  CHECK(d.reason == "very_high_uncertainty_conservative_default");
  CHECK(d.strategy == "high_uncertainty_reasoning_enabled");
  REQUIRE(d.top_categories.size() == 3);

  d = make_reasoning_decision(std::vector<double>{.45, .40, .10, .03, .01, .01}, names, kFlags,
                              0.6);
  CHECK(d.strategy == "top_two_categories_weighted");
  REQUIRE(d.top_categories.size() == 2);
  CHECK(d.top_categories[0].name == "biology");
  CHECK(d.top_categories[1].name == "chemistry");

  const std::vector<std::string> other_first{"other",   "biology", "chemistry",
                                             "physics", "law",     "business"};
  d = make_reasoning_decision(std::vector<double>{.70, .15, .10, .03, .01, .01}, other_first,
                              kFlags, 0.6);
  CHECK(d.reason == "medium_uncertainty_top_category_above_threshold");
  CHECK(d.strategy == "trust_top_category");
}

TEST_CASE("entropy: medium uncertainty below the threshold uses the weighted top three") {
  const std::vector<std::string> names{"physics", "biology", "law", "other"};
  const std::vector<double> q{.75, .15, .05, .05};
  REQUIRE(uncertainty_level(normalized_entropy(q)) == UncertaintyLevel::medium);
  const auto d = make_reasoning_decision(q, names, kFlags, 0.8);
  CHECK(d.reason == "medium_uncertainty_weighted");
  CHECK(d.strategy == "weighted_decision");
  CHECK(d.top_categories.size() == 3);
  // W = .75 + .15 + .05, R = .75 → R/W ≈ 0.789 > 0.5.
  CHECK(d.use_reasoning);
  CHECK(d.confidence == doctest::Approx(0.75 / 0.95));
}

TEST_CASE("entropy: categories missing from the reasoning map") {
  const std::vector<std::string> names{"poetry", "biology"};
  const std::vector<double> p{.99, .01};
  const auto d = make_reasoning_decision(p, names, kFlags, 0.6);
  CHECK(d.reason == "category_not_in_reasoning_map");
  CHECK(d.strategy == "unknown_category_default");
  CHECK_FALSE(d.use_reasoning);
  CHECK(d.confidence == doctest::Approx(0.99 * 0.8));

  // Weighted decision with no flagged candidate: {false, 0.5}.
  const std::vector<std::string> unknown{"a", "b", "c"};
  const std::vector<double> high{.6, .35, .05};
  REQUIRE(uncertainty_level(normalized_entropy(high)) == UncertaintyLevel::high);
  const auto w = make_reasoning_decision(high, unknown, kFlags, 0.6);
  CHECK(w.strategy == "top_two_categories_weighted");
  CHECK_FALSE(w.use_reasoning);
  CHECK(w.confidence == doctest::Approx(0.5));
}

TEST_CASE("entropy: very low uncertainty multiplies by 0.95") {
  const std::vector<std::string> names{"physics", "biology", "law"};
  const std::vector<double> p{.99, .005, .005};
  const auto d = make_reasoning_decision(p, names, kFlags, 0.6);
  CHECK(uncertainty_level(normalized_entropy(p)) == UncertaintyLevel::very_low);
  CHECK(d.reason == "very_low_uncertainty_trust_classification");
  CHECK(d.use_reasoning);
  CHECK(d.confidence == doctest::Approx(0.99 * 0.95));
}

TEST_CASE("entropy: empty input and n <= 1") {
  const auto d = make_reasoning_decision({}, {}, kFlags, 0.6);
  CHECK_FALSE(d.use_reasoning);
  CHECK(d.confidence == 0.0);
  CHECK(d.reason == "no_classification_data");
  CHECK(d.strategy == "default_no_reasoning");
  CHECK(d.top_categories.empty());

  CHECK(shannon_entropy({}) == 0.0);
  CHECK(normalized_entropy({}) == 0.0);
  const std::vector<double> one{1.0};
  CHECK(shannon_entropy(one) == 0.0);
  CHECK(normalized_entropy(one) == 0.0);
  const std::vector<std::string> physics{"physics"};
  const auto single = make_reasoning_decision(one, physics, kFlags, 0.6);
  CHECK(single.reason == "very_low_uncertainty_trust_classification");
  CHECK(single.use_reasoning);

  const std::vector<std::string> two_names{"a", "b"};
  CHECK_THROWS_AS(make_reasoning_decision(one, two_names, kFlags, 0.6), std::invalid_argument);
}

TEST_CASE("entropy: zero probabilities contribute nothing, uniform is maximal") {
  const std::vector<double> with_zero{.5, .5, 0.0};
  CHECK(shannon_entropy(with_zero) == doctest::Approx(1.0));
  const std::vector<double> uniform(8, 0.125);
  CHECK(shannon_entropy(uniform) == doctest::Approx(3.0));
  CHECK(normalized_entropy(uniform) == doctest::Approx(1.0));
}

TEST_CASE("entropy: level boundaries and names") {
  CHECK(uncertainty_level(0.8) == UncertaintyLevel::very_high);
  CHECK(uncertainty_level(0.6) == UncertaintyLevel::high);
  CHECK(uncertainty_level(0.4) == UncertaintyLevel::medium);
  CHECK(uncertainty_level(0.2) == UncertaintyLevel::low);
  CHECK(uncertainty_level(0.1999) == UncertaintyLevel::very_low);
  CHECK(to_string(UncertaintyLevel::very_high) == "very_high");
  CHECK(to_string(UncertaintyLevel::very_low) == "very_low");
}

TEST_CASE("entropy: ties are broken by class index") {
  const std::vector<std::string> names{"law", "physics", "biology", "business"};
  const std::vector<double> p{.25, .25, .25, .25};
  const auto d = make_reasoning_decision(p, names, kFlags, 0.6);
  REQUIRE(d.top_categories.size() == 3);
  CHECK(d.top_categories[0].name == "law");
  CHECK(d.top_categories[1].name == "physics");
  CHECK(d.top_categories[2].name == "biology");

  // A tie in the high band: law(false) and physics(true) at .45 each → R/W = 0.5 → false.
  const std::vector<double> q{.45, .45, .05, .05};
  REQUIRE(uncertainty_level(normalized_entropy(q)) == UncertaintyLevel::high);
  const auto h = make_reasoning_decision(q, names, kFlags, 0.6);
  CHECK(h.top_categories[0].name == "law");
  CHECK_FALSE(h.use_reasoning);
  CHECK(h.confidence == doctest::Approx(0.5));
  // Same input, same output.
  CHECK(make_reasoning_decision(q, names, kFlags, 0.6).to_json() == h.to_json());
}
