// Internal: a model's outputs (in its label order) mapped onto the configured categories.
#pragma once

#include "mcpclass/classify/category.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace mcpclass::classify::detail {

/// Category index of each output label. Throws ClassifyError, prefixed with `what`, when the
/// counts differ or a label names no configured category (naming it).
std::vector<std::size_t> output_to_category(const CategorySet& categories,
                                            const std::vector<std::string>& labels,
                                            const std::string& what);

/// `p` (in label order) rearranged into category order.
std::vector<double> reorder(const std::vector<double>& p, const std::vector<std::size_t>& map);

}  // namespace mcpclass::classify::detail
