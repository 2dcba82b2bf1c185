// Turns a class distribution into routing advice: which model, and whether to enable reasoning.
// The default-constructed policy is the reference policy (reference.md §1). Plain value; const
// members are thread-safe.
#pragma once

#include "mcpclass/classify/category.hpp"
#include "mcpclass/classify/classification.hpp"
#include "mcpclass/classify/entropy.hpp"

#include <boost/json.hpp>

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace mcpclass::classify {

namespace json = boost::json;

/// Where use_reasoning comes from.
enum class ReasoningSource {
  rules,    ///< The ordered rules below (the reference behaviour).
  entropy,  ///< make_reasoning_decision() over the distribution, with each category's
            ///< `use_reasoning` as its flag (categories without one are unknown to it).
};

struct RoutingDecision {
  std::string model;
  bool use_reasoning = false;
  ReasoningDecision decision;  ///< Always the entropy decision, whichever source was used.
};

/// Rules, evaluated in this order when `reasoning == rules`; the first that fires decides:
///  0. the category's own `use_reasoning`, when set;
///  1. complex_query: more than N words and a marker word (whole word, case-insensitive);
///  2. short_queries: category X with fewer than N words;
///  3. high_confidence: confidence > above;
///  4. low_confidence: confidence < below;
///  5. default_use_reasoning.
/// Model: out_of_scope.model (else default_model) when the classification's in_scope is below
/// out_of_scope.below; else low_confidence.model when confidence < below and it is set, else the
/// category's `model`, else default_model — in both modes.
struct RoutingPolicy {
  struct ComplexQueryRule {
    bool enabled = true;
    std::size_t more_than_words = 20;
    std::vector<std::string> markers{"why",     "how",      "explain", "analyze",
                                     "compare", "evaluate", "describe"};
    bool use_reasoning = true;
  };
  struct ShortQueryRule {
    std::string category;
    std::size_t fewer_than_words = 15;
    bool use_reasoning = false;
  };
  struct HighConfidenceRule {
    bool enabled = true;
    double above = 0.9;
    bool use_reasoning = false;
  };
  struct LowConfidenceRule {
    bool enabled = true;
    double below = 0.6;
    bool use_reasoning = true;
    std::optional<std::string> model;
  };
  /// Text far from everything the classifier was trained on ("none of the categories", which a
  /// low confidence cannot tell from "unsure between two"); fires only for classifiers that give
  /// Classification::in_scope. Off in the reference policy; `routing.out_of_scope` turns it on.
  struct OutOfScopeRule {
    bool enabled = false;
    double below = 0.1;  ///< in_scope below this fires (a share of held-out in-domain rows).
    std::optional<std::string> model;  ///< Else default_model.
  };

  ReasoningSource reasoning = ReasoningSource::rules;
  std::string default_model = "openai/gpt-oss-20b";
  bool default_use_reasoning = true;
  ComplexQueryRule complex_query;
  std::vector<ShortQueryRule> short_queries{{"math", 15, false}};
  HighConfidenceRule high_confidence;
  LowConfidenceRule low_confidence;
  OutOfScopeRule out_of_scope;
  /// Base threshold passed to make_reasoning_decision().
  double entropy_threshold = 0.6;

  /// `probabilities[i]` belongs to `categories[i]`; `class_index` is the chosen class;
  /// `in_scope` the classifier's out-of-scope score, when it gives one.
  /// Throws std::invalid_argument on size mismatch or an out-of-range index.
  RoutingDecision apply(std::string_view text, const CategorySet& categories,
                        std::size_t class_index, std::span<const double> probabilities,
                        double confidence, std::optional<double> in_scope = std::nullopt) const;
  /// True when out_of_scope is enabled and `in_scope` is present and below its threshold.
  bool out_of_scope_fires(std::optional<double> in_scope) const;

  json::object to_json() const;
  /// Strict: unknown keys and bad types/ranges throw ConfigError naming `path.key`. Missing keys
  /// keep their reference defaults.
  static RoutingPolicy from_json(const json::value& v, const std::string& path = "routing");
  /// Rules may only name existing categories. Throws ConfigError under `path`.
  void check_against(const CategorySet& categories, const std::string& path = "routing") const;
};

/// Words as Python's str.split() counts them (runs of ASCII whitespace separate words).
std::size_t count_words(std::string_view text);

/// Builds a complete Classification from a classifier's distribution: argmax (ties → lower
/// index), confidence = max p, entropy, the classifier's `in_scope` (when it gives one; checked
/// to lie in [0, 1]), and the policy's routing. The distribution must have one
/// finite, non-negative entry per category and a positive sum; it is renormalised to sum to 1.
/// Throws InvalidClassification otherwise.
Classification make_classification(std::string_view text, const CategorySet& categories,
                                   std::vector<double> probabilities, const RoutingPolicy& policy,
                                   std::optional<double> in_scope = std::nullopt);

}  // namespace mcpclass::classify
