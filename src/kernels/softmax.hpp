// Internal: the softmax of attention rows, with exp by one polynomial (exp_lane.hpp) computed the
// same way by every kernel set, so every set gives the same bits. std::exp per value took 80 ms of
// a BERT-base forward at 128 tokens on one core of the AVX2 EPYC (144 heads × 128 × 128 values);
// eight lanes at a time take a tenth of that.
#pragma once

#include "kernels/cpu_features.hpp"
#include "kernels/exp_lane.hpp"

#include <cstddef>

namespace mcpclass::kernels {

/// row[lo, hi) ← softmax of row[lo, hi) (exp(v − max) / Σ); the rest of row[0, n) ← 0.
/// Thread-safety: pure.
void softmax_row(KernelSet set, float* row, std::size_t n, std::size_t lo, std::size_t hi);

namespace detail {

/// One kernel set's softmax of row[0, count) in place (count ≥ 1).
using SoftmaxRow = void (*)(float* row, std::size_t count);
SoftmaxRow softmax_row_avx2();

}  // namespace detail

}  // namespace mcpclass::kernels
