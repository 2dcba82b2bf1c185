#include "mcpclass/classify/rule_classifier.hpp"

#include "classify/keyword_matcher.hpp"
#include "mcpclass/classify/provenance.hpp"
#include "util/config_reader.hpp"

#include <re2/re2.h>
#include <re2/set.h>

#include <algorithm>
#include <cmath>

namespace mcpclass::classify {

namespace {

// Memory budgets bound the DFA caches, hence per-query memory, whatever the input.
constexpr std::int64_t kPatternMaxMem = 8 << 20;
constexpr std::int64_t kSetMaxMem = 32 << 20;

RE2::Options regex_options(std::int64_t max_mem) {
  RE2::Options o;
  o.set_case_sensitive(false);
  o.set_log_errors(false);
  o.set_max_mem(max_mem);
  return o;
}

// A pattern that can match zero characters matches every text somewhere; one that matches any
// single character matches nearly every text. Either turns its category into the reference
// server's `.*` catch-all.
void reject_catch_all(const RE2& re, const std::string& pattern, const std::string& path) {
  for (const std::string_view probe : {"", "a", " ", "a b", "0", "\n"}) {
    re2::StringPiece match;
    if (re.Match(probe, 0, probe.size(), RE2::UNANCHORED, &match, 1) && match.empty())
      util::strict::fail(path,
                         "pattern '" + pattern +
                             "' matches the empty string, so it would match every text; use the "
                             "fallback category for unmatched text instead");
  }
  bool matches_all = true;
  for (const std::string_view probe : {"x", "7", "#", " "})
    matches_all = matches_all && RE2::PartialMatch(probe, re);
  if (matches_all)
    util::strict::fail(path, "pattern '" + pattern +
                                 "' matches any character, so it would match every text; use the "
                                 "fallback category for unmatched text instead");
}

void check_weight(double w, const std::string& path) {
  if (!(w > 0.0) || !std::isfinite(w)) util::strict::fail(path, "must be a positive number");
}

}  // namespace

json::object RuleSet::to_json() const {
  json::object by_category;
  for (const auto& [name, r] : rules) {
    json::array keywords(r.keywords.begin(), r.keywords.end());
    json::array patterns(r.patterns.begin(), r.patterns.end());
    by_category[name] = json::object{{"keywords", std::move(keywords)},
                                     {"patterns", std::move(patterns)},
                                     {"keyword_weight", r.keyword_weight},
                                     {"pattern_weight", r.pattern_weight}};
  }
  json::object out{{"temperature", temperature}, {"fallback_score", fallback_score}};
  if (!fallback.empty()) out["fallback"] = fallback;
  out["rules"] = std::move(by_category);
  return out;
}

RuleSet RuleSet::from_json(const json::value& v, const std::string& path) {
  util::strict::ObjectReader r(v, path);
  RuleSet set;
  set.fallback = r.string("fallback").value_or("");
  set.temperature = r.number("temperature").value_or(set.temperature);
  set.fallback_score = r.number("fallback_score").value_or(set.fallback_score);
  check_weight(set.temperature, r.path_of("temperature"));
  check_weight(set.fallback_score, r.path_of("fallback_score"));
  if (const auto* rules = r.get("rules")) {
    const auto rules_path = r.path_of("rules");
    for (const auto& [name, value] : util::strict::as_object(*rules, rules_path)) {
      util::strict::ObjectReader c(value, util::strict::member_path(rules_path, name));
      CategoryRules cr;
      cr.keywords = c.string_list("keywords").value_or(std::vector<std::string>{});
      cr.patterns = c.string_list("patterns").value_or(std::vector<std::string>{});
      cr.keyword_weight = c.number("keyword_weight").value_or(cr.keyword_weight);
      cr.pattern_weight = c.number("pattern_weight").value_or(cr.pattern_weight);
      check_weight(cr.keyword_weight, c.path_of("keyword_weight"));
      check_weight(cr.pattern_weight, c.path_of("pattern_weight"));
      c.finish();
      set.rules.emplace(std::string(name), std::move(cr));
    }
  }
  r.finish();
  return set;
}

struct RuleClassifier::Impl {
  struct Pattern {
    std::size_t category;
    double weight;
    std::unique_ptr<RE2> regex;
  };
  struct Keyword {
    std::size_t category;
    double weight;
  };

  CategorySet categories;
  RoutingPolicy policy;
  std::size_t fallback = 0;
  double temperature = 0.5;
  double fallback_score = 1.0;
  detail::KeywordMatcher matcher;
  std::vector<Keyword> keywords;  // indexed by matcher id
  std::vector<Pattern> patterns;  // indexed by set index
  RE2::Set set{regex_options(kSetMaxMem), RE2::UNANCHORED};

  Impl(CategorySet cats, const RuleSet& rules, RoutingPolicy p, const std::string& path)
      : categories(std::move(cats)), policy(std::move(p)) {
    check_weight(rules.temperature, util::strict::member_path(path, "temperature"));
    check_weight(rules.fallback_score, util::strict::member_path(path, "fallback_score"));
    temperature = rules.temperature;
    fallback_score = rules.fallback_score;

    const std::string fallback_name = rules.fallback.empty() ? "general" : rules.fallback;
    const auto fallback_index = categories.index_of(fallback_name);
    if (!fallback_index)
      util::strict::fail(util::strict::member_path(path, "fallback"),
                         rules.fallback.empty() ? "required when no category is named 'general'"
                                                : "unknown category '" + rules.fallback + "'");
    fallback = *fallback_index;

    const auto rules_path = util::strict::member_path(path, "rules");
    for (const auto& [name, cr] : rules.rules) {
      const auto index = categories.index_of(name);
      const auto cat_path = util::strict::member_path(rules_path, name);
      if (!index) util::strict::fail(cat_path, "unknown category '" + name + "'");
      check_weight(cr.keyword_weight, util::strict::member_path(cat_path, "keyword_weight"));
      check_weight(cr.pattern_weight, util::strict::member_path(cat_path, "pattern_weight"));
      for (std::size_t i = 0; i < cr.keywords.size(); ++i) {
        // The key path only for an error: building it for each of hundreds of keywords was a
        // tenth of loading the default configuration.
        try {
          matcher.add(cr.keywords[i]);
        } catch (const ConfigError& e) {
          util::strict::fail(
              util::strict::index_path(util::strict::member_path(cat_path, "keywords"), i),
              e.message());
        }
        keywords.push_back({*index, cr.keyword_weight});
      }
      for (std::size_t i = 0; i < cr.patterns.size(); ++i) {
        const auto pat_path =
            util::strict::index_path(util::strict::member_path(cat_path, "patterns"), i);
        const auto& re = add(*index, cr.pattern_weight, cr.patterns[i], pat_path);
        reject_catch_all(re, cr.patterns[i], pat_path);
      }
    }
    if (!patterns.empty() && !set.Compile())
      util::strict::fail(rules_path, "the rules exceed the regular-expression memory budget");
  }

  const RE2& add(std::size_t category, double weight, const std::string& pattern,
                 const std::string& path) {
    auto re = std::make_unique<RE2>(pattern, regex_options(kPatternMaxMem));
    if (!re->ok()) util::strict::fail(path, "invalid regular expression: " + re->error());
    std::string error;
    if (set.Add(pattern, &error) != static_cast<int>(patterns.size()))
      util::strict::fail(path, "invalid regular expression: " + error);
    patterns.push_back({category, weight, std::move(re)});
    return *patterns.back().regex;
  }

  std::vector<double> scores(std::string_view text) const {
    std::vector<double> out(categories.size(), 0.0);
    matcher.for_each_match(
        text, [&](std::size_t id) { out[keywords[id].category] += keywords[id].weight; });
    if (patterns.empty()) return out;

    // Collecting which patterns matched allocates; most texts match none, which a first pass
    // without the list tells for free.
    RE2::Set::ErrorInfo error{RE2::Set::kNoError};
    if (!set.Match(text, nullptr, &error) && error.kind == RE2::Set::kNoError) return out;
    // RE2 fills a std::vector; one kept per thread lends its capacity to every call (RE2's own
    // match set still costs three allocations per matching text). Matching each category's set
    // alone instead, which allocates nothing, doubled the time: a pass of RE2 costs more than
    // an allocation.
    thread_local std::vector<int> scratch;
    std::vector<int>& hits = scratch;
    if (!set.Match(text, &hits, &error) && error.kind != RE2::Set::kNoError) {
      // The set's DFA gave up (cache budget): match one by one; each RE2 falls back to its NFA,
      // still linear in the text.
      hits.clear();
      for (std::size_t i = 0; i < patterns.size(); ++i)
        if (RE2::PartialMatch(text, *patterns[i].regex)) hits.push_back(static_cast<int>(i));
    }
    for (const int hit : hits) {
      const auto& p = patterns[static_cast<std::size_t>(hit)];
      out[p.category] += p.weight;
    }
    return out;
  }

  std::vector<double> probabilities(std::string_view text) const {
    auto s = scores(text);
    if (std::all_of(s.begin(), s.end(), [](double x) { return x == 0.0; }))
      s[fallback] = fallback_score;
    const double top = *std::max_element(s.begin(), s.end());
    double sum = 0.0;
    for (auto& x : s) {
      // Subtracting the maximum keeps exp() in range for any number of matches.
      x = std::exp((x - top) / temperature);
      sum += x;
    }
    for (auto& x : s) x /= sum;
    return s;
  }
};

RuleClassifier::RuleClassifier(CategorySet categories, RuleSet rules, RoutingPolicy policy,
                               const std::string& path)
    : impl_(std::make_unique<const Impl>(std::move(categories), rules, std::move(policy), path)),
      model_id_(fnv1a64_id(json::serialize(rules.to_json()))) {}

RuleClassifier::~RuleClassifier() = default;

const CategorySet& RuleClassifier::categories() const {
  return impl_->categories;
}

Classification RuleClassifier::classify(std::string_view text, const ClassifyOptions&) const {
  return make_classification(text, impl_->categories, impl_->probabilities(text), impl_->policy);
}

std::vector<double> RuleClassifier::scores(std::string_view text) const {
  return impl_->scores(text);
}

std::vector<double> RuleClassifier::probabilities(std::string_view text) const {
  return impl_->probabilities(text);
}

json::object RuleClassifier::info() const {
  return {{"kind", "rules"},
          {"model", "rules (keywords + RE2 patterns)"},
          {"index_size", impl_->keywords.size() + impl_->patterns.size()},
          {"keywords", impl_->keywords.size()},
          {"patterns", impl_->patterns.size()},
          {"categories", impl_->categories.size()},
          {"fallback", impl_->categories[impl_->fallback].name},
          {"temperature", impl_->temperature}};
}

}  // namespace mcpclass::classify
