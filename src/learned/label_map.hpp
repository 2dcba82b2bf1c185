// Internal: a model's outputs (in its label order) mapped onto the configured categories.
#pragma once

#include "mcpclass/classify/category.hpp"

#include <cstddef>
#include <span>
#include <string>
#include <vector>

namespace mcpclass::learned::detail {

/// Category index of each output label. Throws ClassifyError, prefixed with `what`, when the
/// counts differ or a label names no configured category (naming it).
std::vector<std::size_t> output_to_category(const classify::CategorySet& categories,
                                            const std::vector<std::string>& labels,
                                            const std::string& what);

/// `p` (in label order) rearranged into category order.
std::vector<double> reorder(const std::vector<double>& p, const std::vector<std::size_t>& map);

/// A sequence classifier's `logits` (in label order) as category-order scores exp(logit − max):
/// the softmax before its division, which make_classification() does.
std::vector<double> scores_from_logits(std::span<const float> logits,
                                       const std::vector<std::size_t>& map);

}  // namespace mcpclass::learned::detail
