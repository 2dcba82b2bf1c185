// Internal: the float epilogue of one row of a 16-output int8 tile on 256 bits, which the AVX2
// and AVX-VNNI tiles share: y = sum · (xscale · wscale) + bias with one rounding each, as every
// kernel set computes it (qgemm.hpp).
#pragma once

#include "kernels/qgemm.hpp"

#if defined(__x86_64__)

#include "kernels/isa.hpp"

#include <algorithm>
#include <cstddef>

namespace mcpclass::kernels::detail {
MCPCLASS_ISA_BEGIN

/// The row's sums of outputs 0–7 and 8–15 (`width` of them stored to y); `wscale` and `bias`
/// hold kQPanel values.
MCPCLASS_ISA("avx2,fma")
inline void store_qrow_avx2(__m256i sums0, __m256i sums1, float xscale, const float* wscale,
                            const float* bias, float* y, std::size_t width) {
  const __m256 xs = _mm256_set1_ps(xscale);
  const __m256 y0 = _mm256_fmadd_ps(
      _mm256_cvtepi32_ps(sums0), _mm256_mul_ps(xs, _mm256_loadu_ps(wscale)), _mm256_loadu_ps(bias));
  const __m256 y1 =
      _mm256_fmadd_ps(_mm256_cvtepi32_ps(sums1), _mm256_mul_ps(xs, _mm256_loadu_ps(wscale + 8)),
                      _mm256_loadu_ps(bias + 8));
  if (width == kQPanel) {
    _mm256_storeu_ps(y, y0);
    _mm256_storeu_ps(y + 8, y1);
    return;
  }
  alignas(32) float row[kQPanel];
  _mm256_store_ps(row, y0);
  _mm256_store_ps(row + 8, y1);
  std::copy_n(row, width, y);
}

MCPCLASS_ISA_END
}  // namespace mcpclass::kernels::detail

#endif
