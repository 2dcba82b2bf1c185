#include "learned/label_map.hpp"

#include "mcpclass/classify/errors.hpp"

#include <algorithm>
#include <cmath>

namespace mcpclass::learned {
using classify::CategorySet;
using classify::ClassifyError;
}  // namespace mcpclass::learned

namespace mcpclass::learned::detail {

std::vector<std::size_t> output_to_category(const CategorySet& categories,
                                            const std::vector<std::string>& labels,
                                            const std::string& what) {
  if (labels.size() != categories.size())
    throw ClassifyError(what + " has " + std::to_string(labels.size()) +
                        " labels but the configuration has " + std::to_string(categories.size()) +
                        " categories");
  std::vector<std::size_t> out;
  for (const auto& l : labels) {
    const auto c = categories.index_of(l);
    if (!c) throw ClassifyError(what + " label '" + l + "' is not a configured category");
    out.push_back(*c);
  }
  return out;
}

std::vector<double> reorder(const std::vector<double>& p, const std::vector<std::size_t>& map) {
  std::vector<double> out(p.size());
  for (std::size_t i = 0; i < p.size(); ++i) out[map[i]] = p[i];
  return out;
}

std::vector<double> scores_from_logits(std::span<const float> logits,
                                       const std::vector<std::size_t>& map) {
  const double mx = *std::max_element(logits.begin(), logits.end());
  std::vector<double> out(logits.size());
  for (std::size_t i = 0; i < logits.size(); ++i)
    out[map[i]] = std::exp(static_cast<double>(logits[i]) - mx);
  return out;
}

}  // namespace mcpclass::learned::detail
