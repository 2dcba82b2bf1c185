// Internal: what a native model computes with, chosen once at load from its settings: the kernel
// set (the CPU's best, capped by the `kernels` setting and MCPCLASS_KERNELS) and the precision
// (`auto`: float32, the reference's own numbers; bf16 and int8 trade accuracy for speed and are
// asked for by name — bench/results/precision-accuracy.md measures what they cost).
#pragma once

#include "kernels/dense_rows.hpp"
#include "mcpclass/learned/embedding_encoder.hpp"

#include <boost/json.hpp>

#include <string>

namespace mcpclass::learned::detail {

/// The Compute of a model configured with `precision` and `kernels`; `what` names the model in
/// errors (e.g. "model 'dir'"). Throws ClassifyError for an unknown kernel set, one this CPU
/// lacks (naming the missing features), or a precision the engine cannot run here: bf16 names
/// the feature it needs (avx512_bf16) when the CPU lacks it, and the kernel set it needs
/// (avx512_bf16, or amx above it) when the model's is capped lower.
kernels::Compute choose_compute(EncoderPrecision precision, const std::string& kernels,
                                const std::string& what);

/// {precision, kernels, cpu}: what a model computes with and the CPU's features, for info(),
/// /health and `mcpclass model inspect`.
boost::json::object describe_compute(const kernels::Compute& compute);

/// The names of the kernel sets this CPU runs, lowest first.
boost::json::array runnable_kernel_sets();

}  // namespace mcpclass::learned::detail
