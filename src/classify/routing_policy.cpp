#include "mcpclass/classify/routing_policy.hpp"

#include "util/config_reader.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <stdexcept>

namespace mcpclass::classify {

namespace {

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

std::string ascii_lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Whole-word matching, unlike the reference's substring test where "show" contains "how".
bool has_marker(std::string_view text, const std::vector<std::string>& markers) {
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && !std::isalnum(static_cast<unsigned char>(text[i]))) ++i;
    const std::size_t start = i;
    while (i < text.size() && std::isalnum(static_cast<unsigned char>(text[i]))) ++i;
    if (i == start) continue;
    const auto word = ascii_lower(text.substr(start, i - start));
    if (std::find(markers.begin(), markers.end(), word) != markers.end()) return true;
  }
  return false;
}

bool rules_reasoning(const RoutingPolicy& p, std::string_view text, const Category& category,
                     double confidence) {
  if (category.use_reasoning) return *category.use_reasoning;
  const std::size_t words = count_words(text);
  if (p.complex_query.enabled && words > p.complex_query.more_than_words &&
      has_marker(text, p.complex_query.markers))
    return p.complex_query.use_reasoning;
  for (const auto& rule : p.short_queries)
    if (rule.category == category.name && words < rule.fewer_than_words) return rule.use_reasoning;
  if (p.high_confidence.enabled && confidence > p.high_confidence.above)
    return p.high_confidence.use_reasoning;
  if (p.low_confidence.enabled && confidence < p.low_confidence.below)
    return p.low_confidence.use_reasoning;
  return p.default_use_reasoning;
}

void check_unit(const std::optional<double>& v, const std::string& path) {
  if (v && (*v < 0.0 || *v > 1.0)) util::strict::fail(path, "must be within [0, 1]");
}

// What both confidence rules have: `enabled`, a threshold in [0, 1] named `threshold_key`, and
// `use_reasoning`.
template <class Rule>
void read_confidence_rule(util::strict::ObjectReader& r, Rule& rule, std::string_view threshold_key,
                          double& threshold) {
  rule.enabled = r.boolean("enabled").value_or(rule.enabled);
  const auto value = r.number(threshold_key);
  check_unit(value, r.path_of(threshold_key));
  threshold = value.value_or(threshold);
  rule.use_reasoning = r.boolean("use_reasoning").value_or(rule.use_reasoning);
}

// A rule's optional `model`: absent, or a non-empty name.
std::optional<std::string> optional_model(util::strict::ObjectReader& r) {
  auto model = r.string("model");
  if (model && model->empty()) util::strict::fail(r.path_of("model"), "must not be empty");
  return model;
}

std::size_t word_limit(util::strict::ObjectReader& r, std::string_view key, std::size_t fallback) {
  const auto v = r.integer(key);
  if (!v) return fallback;
  if (*v < 0) util::strict::fail(r.path_of(key), "must not be negative");
  return static_cast<std::size_t>(*v);
}

}  // namespace

std::size_t count_words(std::string_view text) {
  std::size_t words = 0;
  bool in_word = false;
  for (const char c : text) {
    const bool space = is_space(c);
    if (!space && !in_word) ++words;
    in_word = !space;
  }
  return words;
}

RoutingDecision RoutingPolicy::apply(std::string_view text, const CategorySet& categories,
                                     std::size_t class_index, std::span<const double> probabilities,
                                     double confidence, std::optional<double> in_scope) const {
  if (probabilities.size() != categories.size())
    throw std::invalid_argument("RoutingPolicy::apply: probabilities do not match categories");
  if (class_index >= categories.size())
    throw std::invalid_argument("RoutingPolicy::apply: class index out of range");
  const Category& category = categories[class_index];

  RoutingDecision out;
  out.decision = make_reasoning_decision(probabilities, categories.names(),
                                         categories.reasoning_flags(), entropy_threshold);
  out.use_reasoning = reasoning == ReasoningSource::entropy
                          ? out.decision.use_reasoning
                          : rules_reasoning(*this, text, category, confidence);

  const bool low = low_confidence.enabled && confidence < low_confidence.below;
  if (out_of_scope_fires(in_scope))
    out.model = out_of_scope.model.value_or(default_model);
  else if (low && low_confidence.model)
    out.model = *low_confidence.model;
  else
    out.model = category.model.value_or(default_model);
  return out;
}

bool RoutingPolicy::out_of_scope_fires(std::optional<double> in_scope) const {
  return out_of_scope.enabled && in_scope && *in_scope < out_of_scope.below;
}

json::object RoutingPolicy::to_json() const {
  json::array markers;
  for (const auto& m : complex_query.markers) markers.emplace_back(m);
  json::array shorts;
  for (const auto& s : short_queries)
    shorts.push_back(json::object{{"category", s.category},
                                  {"fewer_than_words", s.fewer_than_words},
                                  {"use_reasoning", s.use_reasoning}});
  json::object low{{"enabled", low_confidence.enabled},
                   {"below", low_confidence.below},
                   {"use_reasoning", low_confidence.use_reasoning}};
  if (low_confidence.model) low["model"] = *low_confidence.model;
  json::object scope{{"enabled", out_of_scope.enabled}, {"below", out_of_scope.below}};
  if (out_of_scope.model) scope["model"] = *out_of_scope.model;
  return {
      {"reasoning", reasoning == ReasoningSource::entropy ? "entropy" : "rules"},
      {"default_model", default_model},
      {"default_use_reasoning", default_use_reasoning},
      {"complex_query", json::object{{"enabled", complex_query.enabled},
                                     {"more_than_words", complex_query.more_than_words},
                                     {"markers", std::move(markers)},
                                     {"use_reasoning", complex_query.use_reasoning}}},
      {"short_queries", std::move(shorts)},
      {"high_confidence", json::object{{"enabled", high_confidence.enabled},
                                       {"above", high_confidence.above},
                                       {"use_reasoning", high_confidence.use_reasoning}}},
      {"low_confidence", std::move(low)},
      {"out_of_scope", std::move(scope)},
      {"entropy_threshold", entropy_threshold},
  };
}

RoutingPolicy RoutingPolicy::from_json(const json::value& v, const std::string& path) {
  util::strict::ObjectReader r(v, path);
  RoutingPolicy p;
  if (const auto s = r.string("reasoning")) {
    if (*s == "rules")
      p.reasoning = ReasoningSource::rules;
    else if (*s == "entropy")
      p.reasoning = ReasoningSource::entropy;
    else
      util::strict::fail(r.path_of("reasoning"),
                         "expected \"rules\" or \"entropy\", got \"" + *s + "\"");
  }
  if (const auto s = r.string("default_model")) {
    if (s->empty()) util::strict::fail(r.path_of("default_model"), "must not be empty");
    p.default_model = *s;
  }
  p.default_use_reasoning = r.boolean("default_use_reasoning").value_or(p.default_use_reasoning);

  if (const auto* cq = r.get("complex_query")) {
    util::strict::ObjectReader q(*cq, r.path_of("complex_query"));
    p.complex_query.enabled = q.boolean("enabled").value_or(p.complex_query.enabled);
    p.complex_query.more_than_words =
        word_limit(q, "more_than_words", p.complex_query.more_than_words);
    if (auto markers = q.string_list("markers")) {
      for (std::size_t i = 0; i < markers->size(); ++i) {
        auto& m = (*markers)[i];
        if (m.empty())
          util::strict::fail(util::strict::index_path(q.path_of("markers"), i),
                             "must not be empty");
        m = ascii_lower(m);
      }
      p.complex_query.markers = std::move(*markers);
    }
    p.complex_query.use_reasoning =
        q.boolean("use_reasoning").value_or(p.complex_query.use_reasoning);
    q.finish();
  }

  if (const auto* sq = r.get("short_queries")) {
    const auto sq_path = r.path_of("short_queries");
    const auto& arr = util::strict::as_array(*sq, sq_path);
    p.short_queries.clear();
    for (std::size_t i = 0; i < arr.size(); ++i) {
      util::strict::ObjectReader s(arr[i], util::strict::index_path(sq_path, i));
      ShortQueryRule rule;
      rule.category = util::strict::as_string(s.required("category"), s.path_of("category"));
      rule.fewer_than_words = word_limit(s, "fewer_than_words", rule.fewer_than_words);
      rule.use_reasoning = s.boolean("use_reasoning").value_or(rule.use_reasoning);
      s.finish();
      p.short_queries.push_back(std::move(rule));
    }
  }

  if (const auto* hc = r.get("high_confidence")) {
    util::strict::ObjectReader h(*hc, r.path_of("high_confidence"));
    read_confidence_rule(h, p.high_confidence, "above", p.high_confidence.above);
    h.finish();
  }

  if (const auto* lc = r.get("low_confidence")) {
    util::strict::ObjectReader l(*lc, r.path_of("low_confidence"));
    read_confidence_rule(l, p.low_confidence, "below", p.low_confidence.below);
    p.low_confidence.model = optional_model(l);
    l.finish();
  }

  // Given at all, the rule is on unless it says `enabled: false` (the reference policy has it off).
  if (const auto* oos = r.get("out_of_scope")) {
    util::strict::ObjectReader o(*oos, r.path_of("out_of_scope"));
    p.out_of_scope.enabled = o.boolean("enabled").value_or(true);
    const auto below = o.number("below");
    check_unit(below, o.path_of("below"));
    p.out_of_scope.below = below.value_or(p.out_of_scope.below);
    p.out_of_scope.model = optional_model(o);
    o.finish();
  }

  const auto threshold = r.number("entropy_threshold");
  check_unit(threshold, r.path_of("entropy_threshold"));
  p.entropy_threshold = threshold.value_or(p.entropy_threshold);
  r.finish();
  return p;
}

void RoutingPolicy::check_against(const CategorySet& categories, const std::string& path) const {
  for (std::size_t i = 0; i < short_queries.size(); ++i) {
    const auto& name = short_queries[i].category;
    if (!categories.find(name))
      util::strict::fail(
          util::strict::member_path(
              util::strict::index_path(util::strict::member_path(path, "short_queries"), i),
              "category"),
          "unknown category '" + name + "'");
  }
}

Classification make_classification(std::string_view text, const CategorySet& categories,
                                   std::vector<double> probabilities, const RoutingPolicy& policy,
                                   std::optional<double> in_scope) {
  if (probabilities.size() != categories.size())
    throw InvalidClassification("classifier returned " + std::to_string(probabilities.size()) +
                                " probabilities for " + std::to_string(categories.size()) +
                                " categories");
  double sum = 0.0;
  double max = 0.0;
  for (const double p : probabilities) {
    if (!std::isfinite(p) || p < 0.0)
      throw InvalidClassification("classifier returned a negative or non-finite probability");
    sum += p;
    max = std::max(max, p);
  }
  if (!(max > 0.0)) throw InvalidClassification("classifier returned an all-zero distribution");
  if (in_scope && !(*in_scope >= 0.0 && *in_scope <= 1.0))
    throw InvalidClassification("classifier returned an in_scope score outside [0, 1]");
  if (!std::isfinite(sum)) {
    // Finite scores whose sum overflows (a host's n * DBL_MAX) would all divide to 0: scaled by
    // the maximum first, each lies in [0, 1] and the sum in [1, n].
    sum = 0.0;
    for (auto& p : probabilities) sum += (p /= max);
  }
  for (auto& p : probabilities) p /= sum;

  Classification c;
  // max_element returns the first maximum: ties go to the lower class index.
  c.class_index = static_cast<std::size_t>(
      std::max_element(probabilities.begin(), probabilities.end()) - probabilities.begin());
  c.category = categories[c.class_index].name;
  c.confidence = probabilities[c.class_index];
  c.entropy = shannon_entropy(probabilities);
  c.in_scope = in_scope;
  auto routing =
      policy.apply(text, categories, c.class_index, probabilities, c.confidence, in_scope);
  c.model = std::move(routing.model);
  c.use_reasoning = routing.use_reasoning;
  c.decision = std::move(routing.decision);
  c.probabilities = std::move(probabilities);
  return c;
}

}  // namespace mcpclass::classify
