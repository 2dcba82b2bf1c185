// Internal: RMSNorm (the decoders' norm: transformers' Qwen3RMSNorm, Gemma3RMSNorm) over groups
// of values in rows, in float32 as both compute it (Gemma's `1 + weight` is folded into the
// weight once at load by the caller). The mean of squares is summed in double, as precise as
// torch's float32 reduction or better; every kernel set gives the same bits.
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <vector>

namespace mcpclass::kernels {

/// In each of `rows` rows (`ld` values apart), each of `groups` consecutive groups of
/// weight.size() values ← x · rsqrt(mean(x²) + eps) · weight, into `out` (which may be x; same
/// layout). groups > 1 is the per-head q_norm / k_norm. The calling thread's OpenMP team
/// shares the rows.
void rms_norm(const std::vector<float>& weight, float eps, const float* x, std::size_t rows,
              std::size_t ld, std::size_t groups, float* out);

}  // namespace mcpclass::kernels
