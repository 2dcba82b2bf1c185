// The int8 tile of the avx2_vnni set: AVX-VNNI's vpdpbusd on 256 bits (qgemm.hpp: x + 128 as u8
// by s8 weights into int32, less 128 · Σₖ W after), in functions compiled for it alone.
#include "kernels/qgemm.hpp"
#include "kernels/qgemm_store_avx2.hpp"
#include "kernels/tile_rows.hpp"

#if defined(__x86_64__)

#include "kernels/isa.hpp"

#include <algorithm>
#include <cstring>

namespace mcpclass::kernels::detail {
MCPCLASS_ISA_BEGIN

namespace {

// kRows ≤ 4 rows by one 16-output panel: 8 int32 accumulators, the panel's two weight vectors.
template <std::size_t kRows, bool kAhead>
MCPCLASS_ISA("avx2,fma,avxvnni")
void qtile(const std::int8_t* q, std::size_t depth, const float* xscale, const std::int8_t* panel,
           const float* wscale, const std::int32_t* column_sums, const float* bias, float* y,
           std::size_t ldy, std::size_t width, const std::int8_t* next) {
  static_assert(kRows <= 4);
  __m256i c00 = _mm256_setzero_si256(), c01 = c00, c10 = c00, c11 = c00;
  __m256i c20 = c00, c21 = c00, c30 = c00, c31 = c00;
  const __m256i flip = _mm256_set1_epi8(static_cast<char>(0x80));  // q ^ 0x80 = q + 128 as u8
  const std::int8_t *q0 = q, *q1 = q0 + depth, *q2 = q1 + depth, *q3 = q2 + depth;
#define MCPCLASS_QTILE_ROW(i)                                           \
  if constexpr (kRows > i) {                                            \
    std::int32_t bytes;                                                 \
    std::memcpy(&bytes, q##i + g, sizeof bytes);                        \
    const __m256i x = _mm256_xor_si256(_mm256_set1_epi32(bytes), flip); \
    c##i##0 = _mm256_dpbusd_avx_epi32(c##i##0, x, w0);                  \
    c##i##1 = _mm256_dpbusd_avx_epi32(c##i##1, x, w1);                  \
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
  const auto* sums = reinterpret_cast<const __m256i*>(column_sums);
  const __m256i k0 = _mm256_slli_epi32(_mm256_loadu_si256(sums), 7);
  const __m256i k1 = _mm256_slli_epi32(_mm256_loadu_si256(sums + 1), 7);
#define MCPCLASS_QTILE_STORE(i)                                                              \
  if constexpr (kRows > i)                                                                   \
    store_qrow_avx2(_mm256_sub_epi32(c##i##0, k0), _mm256_sub_epi32(c##i##1, k1), xscale[i], \
                    wscale, bias, y + i * ldy, width);
  MCPCLASS_QTILE_STORE(0)
  MCPCLASS_QTILE_STORE(1)
  MCPCLASS_QTILE_STORE(2)
  MCPCLASS_QTILE_STORE(3)
#undef MCPCLASS_QTILE_STORE
}

void qtile_any_rows(const std::int8_t* q, std::size_t depth, std::size_t tile_rows,
                    const float* xscale, const std::int8_t* panel, std::size_t /*panels: 1*/,
                    const float* wscale, const std::int32_t* column_sums, const float* bias,
                    float* y, std::size_t ldy, std::size_t width, const std::int8_t* next,
                    std::size_t next_panels) {
  with_tile_rows<4>(tile_rows, [&](auto kRows) {
    with_fetch(next_panels != 0, [&](auto kAhead) {
      qtile<kRows(), kAhead()>(q, depth, xscale, panel, wscale, column_sums, bias, y, ldy, width,
                               next);
    });
  });
}

}  // namespace

QKernel qkernel_avx2_vnni() {
  return {qtile_any_rows, 4};
}

MCPCLASS_ISA_END
}  // namespace mcpclass::kernels::detail

#else

namespace mcpclass::kernels::detail {
QKernel qkernel_avx2_vnni() {
  return {nullptr, 0};
}
}  // namespace mcpclass::kernels::detail

#endif
