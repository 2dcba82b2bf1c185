// Keyword and regular-expression classifier. Keywords are looked up word by word in a hash index
// and patterns run on RE2 (linear time, bounded memory), so hostile text or hostile patterns
// cannot blow up.
//
// Scoring: for each category c, s_c = keyword_weight_c · (distinct keywords of c found) +
// pattern_weight_c · (distinct patterns of c found). Only when every s_c is 0 does the fallback
// category get s_fallback = fallback_score; it never gets a bonus otherwise, so a matched category
// always beats it. Probabilities are the softmax p_c = exp(s_c / T) / Σ_j exp(s_j / T) with
// temperature T; the winner is the argmax (ties → lower class index), confidence = max p.
#pragma once

#include "mcpclass/classify/category.hpp"
#include "mcpclass/classify/classifier.hpp"
#include "mcpclass/classify/routing_policy.hpp"

#include <boost/json.hpp>

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace mcpclass::classify {

namespace json = boost::json;

/// Evidence for one category.
struct CategoryRules {
  /// Matched as whole words, ASCII case-insensitively. A word is a run of letters, digits, '_',
  /// '+', '#' or non-ASCII bytes; any other characters separate words, in the text and in the
  /// keyword alike ("object-oriented" matches "object oriented"). A trailing `*` lets the last
  /// word match any word it begins ("integra*" finds "integrals"). Limits: 16 words per keyword,
  /// 48 characters in a `*` word.
  std::vector<std::string> keywords;
  /// RE2 syntax, case-insensitive, unanchored. Patterns that can match the empty string, or that
  /// match any single character, are rejected: they would make the category a catch-all.
  std::vector<std::string> patterns;
  double keyword_weight = 1.0;
  double pattern_weight = 2.0;
};

/// Settings of the "rules" classifier (the `classifier` config section, minus `kind`).
struct RuleSet {
  /// Category name → rules. Categories without an entry only win as the fallback.
  std::map<std::string, CategoryRules> rules;
  /// Chosen when nothing matches. Empty: "general" if such a category exists.
  std::string fallback;
  double temperature = 0.5;
  double fallback_score = 1.0;

  json::object to_json() const;
  /// Strict; `path` prefixes messages (`classifier.rules.math.keywords[2]: expected string`).
  static RuleSet from_json(const json::value& v, const std::string& path = "classifier");
};

/// Immutable after construction; all members are thread-safe.
class RuleClassifier final : public Classifier {
 public:
  /// Compiles every keyword and pattern. Throws ConfigError naming the bad entry under `path`
  /// (unknown category, invalid or catch-all regex, bad weight/temperature, missing fallback).
  RuleClassifier(CategorySet categories, RuleSet rules, RoutingPolicy policy = {},
                 const std::string& path = "classifier");
  ~RuleClassifier() override;
  RuleClassifier(const RuleClassifier&) = delete;
  RuleClassifier& operator=(const RuleClassifier&) = delete;

  using Classifier::classify;
  const CategorySet& categories() const override;
  Classification classify(std::string_view text, const ClassifyOptions& options) const override;
  std::string kind() const override { return "rules"; }
  json::object info() const override;
  /// fnv1a64_id() of the rules (RuleSet::to_json()), computed at construction.
  std::string model_id() const override { return model_id_; }

  /// Raw scores s_c (before the fallback bonus), one per category: the evidence behind classify().
  std::vector<double> scores(std::string_view text) const;
  /// The softmax distribution classify() uses.
  std::vector<double> probabilities(std::string_view text) const;

 private:
  struct Impl;
  std::unique_ptr<const Impl> impl_;
  std::string model_id_;
};

}  // namespace mcpclass::classify
