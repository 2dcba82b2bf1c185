#include "mcpclass/classify/classification.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

namespace mcpclass::classify {

namespace {
json::array to_array(const std::vector<double>& values, json::storage_ptr sp) {
  json::array out(std::move(sp));
  out.reserve(values.size());
  for (const double v : values) out.emplace_back(v);
  return out;
}
}  // namespace

json::object to_wire(const Classification& c, bool with_probabilities, json::storage_ptr sp) {
  json::object out(6, sp);
  out.emplace("class", static_cast<std::int64_t>(c.class_index));
  out.emplace("confidence", c.confidence);
  out.emplace("model", c.model);
  out.emplace("use_reasoning", c.use_reasoning);
  if (with_probabilities) {
    out.emplace("probabilities", to_array(c.probabilities, sp));
    out.emplace("entropy", c.entropy);
    if (c.in_scope) out.emplace("in_scope", *c.in_scope);
  }
  return out;
}

json::object Classification::to_json() const {
  auto out = to_wire(*this, true);
  out["category"] = category;
  out["decision"] = decision.to_json();
  return out;
}

std::vector<std::string> router_validation_errors(const json::object& wire,
                                                  std::size_t num_categories) {
  std::vector<std::string> errors;
  const auto n = static_cast<std::int64_t>(num_categories);

  const auto* cls = wire.if_contains("class");
  if (cls == nullptr || !(cls->is_int64() || cls->is_uint64())) {
    errors.emplace_back("class: missing or not an integer");
  } else {
    const bool in_range = cls->is_int64() ? (cls->get_int64() >= 0 && cls->get_int64() < n)
                                          : cls->get_uint64() < num_categories;
    if (!in_range) errors.push_back("class: out of range [0, " + std::to_string(n) + ")");
  }

  const auto* conf = wire.if_contains("confidence");
  if (conf == nullptr || !conf->is_number())
    errors.emplace_back("confidence: missing or not a number");

  const auto* probs = wire.if_contains("probabilities");
  if (probs == nullptr) return errors;
  if (!probs->is_array()) {
    errors.emplace_back("probabilities: not an array");
    return errors;
  }
  const auto& arr = probs->get_array();
  if (arr.size() != num_categories)
    errors.push_back("probabilities: " + std::to_string(arr.size()) + " entries for " +
                     std::to_string(num_categories) + " categories");
  double sum = 0.0;
  double max = 0.0;
  for (std::size_t i = 0; i < arr.size(); ++i) {
    if (!arr[i].is_number()) {
      errors.push_back("probabilities[" + std::to_string(i) + "]: not a number");
      continue;
    }
    const double p = arr[i].to_number<double>();
    if (!(p >= 0.0 && p <= 1.0))
      errors.push_back("probabilities[" + std::to_string(i) + "]: outside [0, 1]");
    sum += p;
    max = std::max(max, p);
  }
  if (!(sum >= 0.95 && sum <= 1.05))
    errors.push_back("probabilities: sum " + std::to_string(sum) + " outside [0.95, 1.05]");
  if (conf != nullptr && conf->is_number() && conf->to_number<double>() < 0.9 * max)
    errors.emplace_back("confidence: below 0.9 * max(probabilities)");
  return errors;
}

void check_classification(const Classification& c, const CategorySet& categories) {
  auto fail = [](const std::string& message) { throw InvalidClassification(message); };
  for (const auto& e : router_validation_errors(to_wire(c, true), categories.size())) fail(e);
  if (c.category != categories[c.class_index].name)
    fail("category '" + c.category + "' does not match class " + std::to_string(c.class_index));
  if (!std::all_of(c.probabilities.begin(), c.probabilities.end(),
                   [](double p) { return std::isfinite(p); }))
    fail("probabilities: not finite");
  const double sum = std::accumulate(c.probabilities.begin(), c.probabilities.end(), 0.0);
  if (std::abs(sum - 1.0) > 1e-6) fail("probabilities: sum " + std::to_string(sum) + " != 1");
  if (!(c.confidence >= 0.0 && c.confidence <= 1.0)) fail("confidence: outside [0, 1]");
  if (std::abs(c.entropy - shannon_entropy(c.probabilities)) > 1e-9)
    fail("entropy: does not match the probabilities");
  if (c.in_scope && !(*c.in_scope >= 0.0 && *c.in_scope <= 1.0))
    fail("in_scope: not within [0, 1]");
}

}  // namespace mcpclass::classify
