// The softmax row of the AVX2 sets (softmax.hpp), eight lanes at a time, in functions compiled
// for AVX2 + FMA alone.
#include "kernels/exp_vector.hpp"
#include "kernels/softmax.hpp"

#if defined(__x86_64__)

#include "kernels/isa.hpp"

#include <algorithm>

namespace mcpclass::kernels::detail {
MCPCLASS_ISA_BEGIN

namespace {

MCPCLASS_ISA("avx2,fma") void softmax(float* row, std::size_t count) {
  std::size_t j = 0;
  __m256 vmax = _mm256_set1_ps(row[0]);
  for (; j + 8 <= count; j += 8) vmax = _mm256_max_ps(vmax, _mm256_loadu_ps(row + j));
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, vmax);
  float mx = lanes[0];
  for (float v : lanes) mx = std::max(mx, v);
  for (; j < count; ++j) mx = std::max(mx, row[j]);
  const __m256 vmx = _mm256_set1_ps(mx);
  __m256 sum = _mm256_setzero_ps();
  for (j = 0; j + 8 <= count; j += 8) {
    const __m256 e = exp8(_mm256_sub_ps(_mm256_loadu_ps(row + j), vmx));
    _mm256_storeu_ps(row + j, e);
    sum = _mm256_add_ps(sum, e);
  }
  _mm256_store_ps(lanes, sum);
  for (std::size_t l = 0; j < count; ++j, ++l) lanes[l] += (row[j] = exp_lane(row[j] - mx));
  for (std::size_t l = 0; l < 4; ++l) lanes[l] += lanes[l + 4];
  for (std::size_t l = 0; l < 2; ++l) lanes[l] += lanes[l + 2];
  const float inv = 1.0f / (lanes[0] + lanes[1]);
  const __m256 vinv = _mm256_set1_ps(inv);
  for (j = 0; j + 8 <= count; j += 8)
    _mm256_storeu_ps(row + j, _mm256_mul_ps(_mm256_loadu_ps(row + j), vinv));
  for (; j < count; ++j) row[j] *= inv;
}

}  // namespace

SoftmaxRow softmax_row_avx2() {
  return softmax;
}

MCPCLASS_ISA_END
}  // namespace mcpclass::kernels::detail

#else

namespace mcpclass::kernels::detail {
SoftmaxRow softmax_row_avx2() {
  return nullptr;
}
}  // namespace mcpclass::kernels::detail

#endif
