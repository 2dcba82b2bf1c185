#include "mcpclass/classify/entropy.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <stdexcept>

namespace mcpclass::classify {

double shannon_entropy(std::span<const double> probabilities) {
  double h = 0.0;
  for (const double p : probabilities)
    if (p > 0.0) h -= p * std::log2(p);
  return h;
}

double normalized_entropy(std::span<const double> probabilities) {
  if (probabilities.size() <= 1) return 0.0;
  return shannon_entropy(probabilities) / std::log2(static_cast<double>(probabilities.size()));
}

UncertaintyLevel uncertainty_level(double hn) {
  if (hn >= 0.8) return UncertaintyLevel::very_high;
  if (hn >= 0.6) return UncertaintyLevel::high;
  if (hn >= 0.4) return UncertaintyLevel::medium;
  if (hn >= 0.2) return UncertaintyLevel::low;
  return UncertaintyLevel::very_low;
}

std::string_view to_string(UncertaintyLevel level) {
  switch (level) {
    case UncertaintyLevel::very_low:
      return "very_low";
    case UncertaintyLevel::low:
      return "low";
    case UncertaintyLevel::medium:
      return "medium";
    case UncertaintyLevel::high:
      return "high";
    case UncertaintyLevel::very_high:
      return "very_high";
  }
  return "unknown";
}

json::object ReasoningDecision::to_json() const {
  json::array top;
  for (const auto& c : top_categories)
    top.push_back(json::object{{"category", c.name}, {"probability", c.probability}});
  return {{"use_reasoning", use_reasoning},
          {"confidence", confidence},
          {"reason", reason},
          {"strategy", strategy},
          {"top_categories", std::move(top)}};
}

namespace {

TopCategories top_k(std::span<const double> probabilities, std::span<const std::string> names,
                    std::size_t k) {
  // Insertion into a list of at most k: no index array to sort. A later class moves ahead only
  // when strictly more probable, so equal probabilities keep class order, the documented
  // tie-break.
  TopCategories out;
  if (k == 0) return out;
  out.reserve(std::min(k, probabilities.size()));
  for (std::size_t i = 0; i < probabilities.size(); ++i) {
    const double p = probabilities[i];
    if (out.size() == k && !(p > out.back().probability)) continue;
    if (out.size() == k) out.pop_back();
    auto at = out.end();
    while (at != out.begin() && p > std::prev(at)->probability) --at;
    out.insert(at, {names[i], p});
  }
  return out;
}

struct Weighted {
  bool use_reasoning;
  double confidence;
};

Weighted weighted_decision(std::span<const CategoryProbability> candidates,
                           const ReasoningFlags& flags) {
  double weight = 0.0;
  double reasoning = 0.0;
  for (const auto& c : candidates) {
    const auto it = flags.find(c.name);
    if (it == flags.end()) continue;
    weight += c.probability;
    if (it->second) reasoning += c.probability;
  }
  if (weight <= 0.0) return {false, 0.5};
  const double ratio = reasoning / weight;
  return {ratio > 0.5, std::abs(ratio - 0.5) + 0.5};
}

}  // namespace

ReasoningDecision make_reasoning_decision(std::span<const double> probabilities,
                                          std::span<const std::string> names,
                                          const ReasoningFlags& flags, double threshold) {
  if (probabilities.size() != names.size())
    throw std::invalid_argument("make_reasoning_decision: " + std::to_string(probabilities.size()) +
                                " probabilities but " + std::to_string(names.size()) + " names");
  if (probabilities.empty())
    return {false, 0.0, "no_classification_data", "default_no_reasoning", {}};

  const auto level = uncertainty_level(normalized_entropy(probabilities));
  auto top = top_k(probabilities, names, 3);
  const auto& best = top.front();
  const auto best_flag = flags.find(best.name);

  switch (level) {
    case UncertaintyLevel::very_high:
      return {true, 0.3, "very_high_uncertainty_conservative_default",
              "high_uncertainty_reasoning_enabled", std::move(top)};
    case UncertaintyLevel::high: {
      top.resize(std::min<std::size_t>(2, top.size()));
      const auto w = weighted_decision(top, flags);
      return {w.use_reasoning, w.confidence, "high_uncertainty_weighted_decision",
              "top_two_categories_weighted", std::move(top)};
    }
    case UncertaintyLevel::medium: {
      if (best.probability >= threshold && best_flag != flags.end())
        return {best_flag->second, best.probability * 0.8,
                "medium_uncertainty_top_category_above_threshold", "trust_top_category",
                std::move(top)};
      const auto w = weighted_decision(top, flags);
      return {w.use_reasoning, w.confidence, "medium_uncertainty_weighted", "weighted_decision",
              std::move(top)};
    }
    case UncertaintyLevel::low:
    case UncertaintyLevel::very_low: {
      if (best_flag == flags.end())
        return {false, best.probability * 0.8, "category_not_in_reasoning_map",
                "unknown_category_default", std::move(top)};
      const double factor = level == UncertaintyLevel::low ? 0.9 : 0.95;
      return {best_flag->second, best.probability * factor,
              level == UncertaintyLevel::low ? "low_uncertainty_trust_classification"
                                             : "very_low_uncertainty_trust_classification",
              "trust_top_category", std::move(top)};
    }
  }
  throw std::logic_error("make_reasoning_decision: unhandled uncertainty level");
}

}  // namespace mcpclass::classify
