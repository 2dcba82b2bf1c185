// `mcpclass eval`: evaluates any configured classifier on labelled rows.
#pragma once

#include "mcpclass/config/config.hpp"
#include "mcpclass/learned/learned_examples.hpp"

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace mcpclass::cli {

using LearnedEvalProgress = std::function<void(std::size_t, std::size_t)>;

struct EvalOptions {
  std::string groups;  ///< "" or "router8".
  std::size_t latency_samples = 200;
};

/// Prints accuracy, per-category precision/recall, the confusion matrix, ECE (15 bins), grouped
/// accuracy and latency percentiles, then one JSON summary line. Returns an ExitCode.
int run_learned_eval(const config::Config& config,
                     const std::vector<learned::LabelledExample>& rows, const EvalOptions& options,
                     const LearnedEvalProgress& progress);

}  // namespace mcpclass::cli
