// The result of classifying one text, its wire form (reference.md §1) and the validation rules
// routers apply to it. Plain values and pure functions: thread-safe.
#pragma once

#include "mcpclass/classify/category.hpp"
#include "mcpclass/classify/entropy.hpp"

#include <boost/json.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace mcpclass::classify {

namespace json = boost::json;

struct Classification {
  std::size_t class_index = 0;
  std::string category;  ///< Name of categories[class_index].
  double confidence = 0.0;
  /// The classifier's real distribution: one entry per category, index = class, sums to 1.
  std::vector<double> probabilities;
  double entropy = 0.0;  ///< Shannon entropy of `probabilities`, bits.
  /// How close the text is to what the classifier was trained on, in [0, 1]: the share of
  /// held-out in-domain rows further out (trained_head heads that carry a scope part; absent
  /// for other classifiers). Low values mean "none of the categories", whatever the confidence.
  std::optional<double> in_scope;
  std::string model;
  bool use_reasoning = false;
  /// The entropy-based decision, always computed (diagnostics even when rules chose
  /// use_reasoning).
  ReasoningDecision decision;
  /// Served from the result cache (CachedClassifier), not computed for this call.
  bool cached = false;
  /// A fallback answered (CompositeClassifier: the local side after the remote failed).
  bool fallback = false;

  /// Everything, for CLIs and logs (the wire object plus category and decision).
  json::object to_json() const;
};

/// Exactly `{"class","confidence","model","use_reasoning"}`, plus `"probabilities"` and
/// `"entropy"` (and `"in_scope"` when the classifier gives one) when `with_probabilities` — the
/// object routers parse from `content[0].text`.
/// Built in `sp` (e.g. one monotonic resource per response).
json::object to_wire(const Classification& c, bool with_probabilities, json::storage_ptr sp = {});

/// The checks a router applies to a wire object (reference.md §1): class in range, probability
/// count, 0.95 <= Σp <= 1.05, every p in [0,1], confidence >= 0.9·max(p). Returns one message per
/// violation; empty means a router accepts it. Probability checks apply only when present.
std::vector<std::string> router_validation_errors(const json::object& wire,
                                                  std::size_t num_categories);

/// Our own, stricter contract: router rules plus Σp = 1 within 1e-6, finite values, name and
/// entropy consistent with the index and distribution. Throws InvalidClassification.
void check_classification(const Classification& c, const CategorySet& categories);

}  // namespace mcpclass::classify
