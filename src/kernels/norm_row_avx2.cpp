// The LayerNorm row of the AVX2 sets (dense_rows.hpp): four values at a time in double, in the
// portable row's lanes and order, in functions compiled for AVX2 + FMA alone.
#include "kernels/dense_rows.hpp"

#if defined(__x86_64__)

#include "kernels/isa.hpp"

#include <cmath>

namespace mcpclass::kernels::detail {
MCPCLASS_ISA_BEGIN

namespace {

MCPCLASS_ISA("avx2,fma")
void norm_row(const Norm& n, float eps, const float* in, float* out, std::size_t w) {
  double lanes[4];
  __m256d acc = _mm256_setzero_pd();
  std::size_t i = 0;
  for (; i + 4 <= w; i += 4) acc = _mm256_add_pd(acc, _mm256_cvtps_pd(_mm_loadu_ps(in + i)));
  _mm256_storeu_pd(lanes, acc);
  for (std::size_t l = 0; i < w; ++i, ++l) lanes[l] += in[i];
  const double mean = lane_sum(lanes) / static_cast<double>(w);
  const __m256d vmean = _mm256_set1_pd(mean);
  acc = _mm256_setzero_pd();
  for (i = 0; i + 4 <= w; i += 4) {
    const __m256d d = _mm256_sub_pd(_mm256_cvtps_pd(_mm_loadu_ps(in + i)), vmean);
    acc = _mm256_fmadd_pd(d, d, acc);
  }
  _mm256_storeu_pd(lanes, acc);
  for (std::size_t l = 0; i < w; ++i, ++l) {
    const double d = in[i] - mean;
    lanes[l] = std::fma(d, d, lanes[l]);
  }
  const double var = lane_sum(lanes) / static_cast<double>(w);
  const double inv = 1.0 / std::sqrt(var + eps);
  const __m256d vinv = _mm256_set1_pd(inv);
  const bool bias = !n.bias.empty();
  for (i = 0; i + 4 <= w; i += 4) {
    const __m128 scaled = _mm256_cvtpd_ps(
        _mm256_mul_pd(_mm256_sub_pd(_mm256_cvtps_pd(_mm_loadu_ps(in + i)), vmean), vinv));
    __m128 y = _mm_mul_ps(scaled, _mm_loadu_ps(n.weight.data() + i));
    if (bias) y = _mm_add_ps(y, _mm_loadu_ps(n.bias.data() + i));
    _mm_storeu_ps(out + i, y);
  }
  for (; i < w; ++i) {
    out[i] = static_cast<float>((in[i] - mean) * inv) * n.weight[i];
    if (bias) out[i] += n.bias[i];
  }
}

}  // namespace

NormRow norm_row_avx2() {
  return norm_row;
}

MCPCLASS_ISA_END
}  // namespace mcpclass::kernels::detail

#else

namespace mcpclass::kernels::detail {
NormRow norm_row_avx2() {
  return nullptr;
}
}  // namespace mcpclass::kernels::detail

#endif
