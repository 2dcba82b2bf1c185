// The int8 kernels of the AVX2 set: vpmaddubsw + vpmaddwd with the sign trick (qgemm.hpp), in
// functions compiled for AVX2 alone, so the rest of the library stays portable.
#include "kernels/qgemm.hpp"
#include "kernels/qgemm_store_avx2.hpp"
#include "kernels/tile_rows.hpp"

#if defined(__x86_64__)

#include "kernels/isa.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace mcpclass::kernels::detail {
MCPCLASS_ISA_BEGIN

namespace {

constexpr float kTinyRow = 1e-30f;

// kRows ≤ 4 rows by one 16-output panel: 8 int32 accumulators, the panel's two weight vectors,
// the broadcast inputs and their magnitudes in the 16 registers. Per group of 4 inputs and per
// row: |x| (u8) · sign(w, x) (s8) by vpmaddubsw into int16 pairs (at most 2 · 128 · 127), then
// vpmaddwd by ones into the int32 sums.
template <std::size_t kRows, bool kAhead>
MCPCLASS_ISA("avx2,fma")
void qtile(const std::int8_t* q, std::size_t depth, const float* xscale, const std::int8_t* panel,
           const float* wscale, const float* bias, float* y, std::size_t ldy, std::size_t width,
           const std::int8_t* next) {
  static_assert(kRows <= 4);
  __m256i c00 = _mm256_setzero_si256(), c01 = c00, c10 = c00, c11 = c00;
  __m256i c20 = c00, c21 = c00, c30 = c00, c31 = c00;
  const __m256i ones = _mm256_set1_epi16(1);
  const std::int8_t *q0 = q, *q1 = q0 + depth, *q2 = q1 + depth, *q3 = q2 + depth;
#define MCPCLASS_QTILE_ROW(i)                                             \
  if constexpr (kRows > i) {                                              \
    std::int32_t bytes;                                                   \
    std::memcpy(&bytes, q##i + g, sizeof bytes);                          \
    const __m256i x = _mm256_set1_epi32(bytes);                           \
    const __m256i ux = _mm256_abs_epi8(x);                                \
    const __m256i p0 = _mm256_maddubs_epi16(ux, _mm256_sign_epi8(w0, x)); \
    c##i##0 = _mm256_add_epi32(c##i##0, _mm256_madd_epi16(p0, ones));     \
    const __m256i p1 = _mm256_maddubs_epi16(ux, _mm256_sign_epi8(w1, x)); \
    c##i##1 = _mm256_add_epi32(c##i##1, _mm256_madd_epi16(p1, ones));     \
  }
  for (std::size_t g = 0; g < depth; g += kQGroup) {
    if constexpr (kAhead) _mm_prefetch(next + g * kQPanel, _MM_HINT_T1);
    const auto* block = reinterpret_cast<const __m256i*>(panel + g * kQPanel);
    const __m256i w0 = _mm256_loadu_si256(block), w1 = _mm256_loadu_si256(block + 1);
    MCPCLASS_QTILE_ROW(0)
    MCPCLASS_QTILE_ROW(1)
    MCPCLASS_QTILE_ROW(2)
    MCPCLASS_QTILE_ROW(3)
  }
#undef MCPCLASS_QTILE_ROW
#define MCPCLASS_QTILE_STORE(i) \
  if constexpr (kRows > i)      \
    store_qrow_avx2(c##i##0, c##i##1, xscale[i], wscale, bias, y + i * ldy, width);
  MCPCLASS_QTILE_STORE(0)
  MCPCLASS_QTILE_STORE(1)
  MCPCLASS_QTILE_STORE(2)
  MCPCLASS_QTILE_STORE(3)
#undef MCPCLASS_QTILE_STORE
}

void qtile_rows(const std::int8_t* q, std::size_t depth, std::size_t tile_rows, const float* xscale,
                const std::int8_t* panel, std::size_t /*panels: 1*/, const float* wscale,
                const std::int32_t*, const float* bias, float* y, std::size_t ldy,
                std::size_t width, const std::int8_t* next, std::size_t next_panels) {
  with_tile_rows<4>(tile_rows, [&](auto kRows) {
    with_fetch(next_panels != 0, [&](auto kAhead) {
      qtile<kRows(), kAhead()>(q, depth, xscale, panel, wscale, bias, y, ldy, width, next);
    });
  });
}

// Eight values times `inv`, rounded to the nearest (even) integer, clamped to [lo, hi].
MCPCLASS_ISA("avx2,fma") inline __m256i to_int(const float* p, __m256 inv, __m256i lo, __m256i hi) {
  const __m256i v = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(p), inv));
  return _mm256_max_epi32(lo, _mm256_min_epi32(hi, v));
}

// The portable row quantization (qgemm.cpp) eight values at a time: the same maximum (exact in
// any order), the same product x · (127 / maxabs) and round-to-nearest-even conversion.
MCPCLASS_ISA("avx2,fma")
void quantize_row(const float* x, std::size_t in, std::int8_t* q, float* scale) {
  const __m256 sign = _mm256_set1_ps(-0.0f);
  const __m256 largest = _mm256_set1_ps(std::numeric_limits<float>::max());
  __m256 vmax = _mm256_setzero_ps(), finite = _mm256_castsi256_ps(_mm256_set1_epi32(-1));
  std::size_t k = 0;
  for (; k + 8 <= in; k += 8) {
    const __m256 a = _mm256_andnot_ps(sign, _mm256_loadu_ps(x + k));
    finite = _mm256_and_ps(finite, _mm256_cmp_ps(a, largest, _CMP_LE_OQ));
    vmax = _mm256_max_ps(vmax, a);
  }
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, vmax);
  float maxabs = 0.0f;
  for (float v : lanes) maxabs = std::max(maxabs, v);
  bool all_finite = _mm256_movemask_ps(finite) == 0xff;
  for (; k < in; ++k) {
    all_finite = all_finite && std::isfinite(x[k]);
    maxabs = std::max(maxabs, std::fabs(x[k]));
  }
  const std::size_t depth = quantized_depth(in);
  if (!all_finite || !(maxabs >= kTinyRow)) {
    std::fill_n(q, depth, std::int8_t{0});
    *scale = all_finite ? 0.0f : std::numeric_limits<float>::quiet_NaN();
    return;
  }
  const float inv = 127.0f / maxabs;
  const __m256 vinv = _mm256_set1_ps(inv);
  const __m256i hi = _mm256_set1_epi32(127), lo = _mm256_set1_epi32(-127);
  const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  k = 0;
  for (; k + 32 <= in; k += 32) {
    const __m256i ab =
        _mm256_packs_epi32(to_int(x + k, vinv, lo, hi), to_int(x + k + 8, vinv, lo, hi));
    const __m256i cd =
        _mm256_packs_epi32(to_int(x + k + 16, vinv, lo, hi), to_int(x + k + 24, vinv, lo, hi));
    const __m256i bytes = _mm256_permutevar8x32_epi32(_mm256_packs_epi16(ab, cd), order);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(q + k), bytes);
  }
  for (; k < in; ++k)
    q[k] = static_cast<std::int8_t>(std::clamp(std::nearbyint(x[k] * inv), -127.0f, 127.0f));
  std::fill(q + in, q + depth, std::int8_t{0});
  *scale = maxabs / 127.0f;
}

}  // namespace

QKernel qkernel_avx2() {
  return {qtile_rows, 4};
}

QuantizeRow quantize_row_avx2() {
  return quantize_row;
}

MCPCLASS_ISA_END
}  // namespace mcpclass::kernels::detail

#else

namespace mcpclass::kernels::detail {
QKernel qkernel_avx2() {
  return {nullptr, 0};
}
QuantizeRow quantize_row_avx2() {
  return nullptr;
}
}  // namespace mcpclass::kernels::detail

#endif
