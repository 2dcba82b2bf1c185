// Shannon entropy of a class distribution and the entropy-based reasoning decision, ported
// exactly from the Semantic Router (reference.md §4). Pure functions: thread-safe.
#pragma once

#include <boost/container/small_vector.hpp>
#include <boost/json.hpp>

#include <functional>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace mcpclass::classify {

namespace json = boost::json;

/// H = Σ_{p>0} -p·log2 p, in bits. Non-positive entries contribute nothing.
double shannon_entropy(std::span<const double> probabilities);
/// H / log2(n); 0 when n <= 1.
double normalized_entropy(std::span<const double> probabilities);

enum class UncertaintyLevel { very_low, low, medium, high, very_high };

/// Thresholds on normalised entropy: >=0.8 very_high, >=0.6 high, >=0.4 medium, >=0.2 low.
UncertaintyLevel uncertainty_level(double normalized_entropy);
/// "very_low", "low", "medium", "high", "very_high".
std::string_view to_string(UncertaintyLevel level);

struct CategoryProbability {
  std::string name;
  double probability = 0.0;
  friend bool operator==(const CategoryProbability&, const CategoryProbability&) = default;
};

/// The decision's top categories: at most three, held inline (no allocation).
using TopCategories = boost::container::small_vector<CategoryProbability, 3>;

/// Whether to enable reasoning, how sure we are, and why (the strings are the reference's).
struct ReasoningDecision {
  bool use_reasoning = false;
  double confidence = 0.0;
  /// The reference's fixed strings: views of static storage, valid for the program's life.
  std::string_view reason;
  std::string_view strategy;
  /// Sorted by probability descending; equal probabilities keep class order.
  TopCategories top_categories;

  json::object to_json() const;
};

/// Category name → whether that category wants reasoning. Categories absent from the map are
/// "unknown" to the decision, exactly as in the reference.
using ReasoningFlags = std::map<std::string, bool, std::less<>>;

/// The reference algorithm. `names[i]` names `probabilities[i]`; throws std::invalid_argument
/// when the sizes differ. Empty input yields the "no_classification_data" decision.
ReasoningDecision make_reasoning_decision(std::span<const double> probabilities,
                                          std::span<const std::string> names,
                                          const ReasoningFlags& flags, double threshold);

}  // namespace mcpclass::classify
