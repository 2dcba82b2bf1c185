// The int8 tile of the avx512_vnni set: vpdpbusd on 512 bits (qgemm.hpp: x + 128 as u8 by s8
// weights into int32, less 128 · Σₖ W after), in functions compiled for it alone.
#include "kernels/qgemm.hpp"
#include "kernels/tile_rows.hpp"

#if defined(__x86_64__)

// GCC 12 warns of _mm512_undefined_* inside unmasked AVX-512 intrinsics (its bug 105593): the
// masked forms with an all-ones mask say the same without it.
#include "kernels/isa.hpp"

#include <algorithm>
#include <cstring>

namespace mcpclass::kernels::detail {
MCPCLASS_ISA_BEGIN

namespace {

// kRows ≤ 8 rows by one 16-output panel: one register of 16 int32 sums per row, the panel's
// weight vector (64 bytes: 4 inputs of 16 outputs), the broadcast inputs.
template <std::size_t kRows>
MCPCLASS_ISA("avx2,fma,avx512f,avx512bw,avx512vl,avx512vnni")
void qtile(const std::int8_t* q, std::size_t depth, const float* xscale, const std::int8_t* panel,
           const float* wscale, const std::int32_t* column_sums, const float* bias, float* y,
           std::size_t ldy, std::size_t width) {
  static_assert(kRows <= 8);
  __m512i c0 = _mm512_setzero_si512(), c1 = c0, c2 = c0, c3 = c0, c4 = c0, c5 = c0, c6 = c0,
          c7 = c0;
  const __m512i flip = _mm512_set1_epi8(static_cast<char>(0x80));  // q ^ 0x80 = q + 128 as u8
  const std::int8_t* rows[8];
  for (std::size_t i = 0; i < 8; ++i) rows[i] = q + std::min<std::size_t>(i, kRows - 1) * depth;
#define MCPCLASS_QTILE_ROW(i)                                                              \
  if constexpr (kRows > i) {                                                               \
    std::int32_t bytes;                                                                    \
    std::memcpy(&bytes, rows[i] + g, sizeof bytes);                                        \
    c##i = _mm512_dpbusd_epi32(c##i, _mm512_xor_si512(_mm512_set1_epi32(bytes), flip), w); \
  }
  for (std::size_t g = 0; g < depth; g += kQGroup) {
    const __m512i w = _mm512_loadu_si512(panel + g * kQPanel);
    MCPCLASS_QTILE_ROW(0)
    MCPCLASS_QTILE_ROW(1)
    MCPCLASS_QTILE_ROW(2)
    MCPCLASS_QTILE_ROW(3)
    MCPCLASS_QTILE_ROW(4)
    MCPCLASS_QTILE_ROW(5)
    MCPCLASS_QTILE_ROW(6)
    MCPCLASS_QTILE_ROW(7)
  }
#undef MCPCLASS_QTILE_ROW
  const __m512i k = _mm512_maskz_slli_epi32(0xffff, _mm512_loadu_si512(column_sums), 7);
  const __m512 s = _mm512_loadu_ps(wscale), b = _mm512_loadu_ps(bias);
  const auto mask = static_cast<__mmask16>((1u << width) - 1u);
#define MCPCLASS_QTILE_STORE(i)                                                                   \
  if constexpr (kRows > i) {                                                                      \
    const __m512 v = _mm512_fmadd_ps(_mm512_maskz_cvtepi32_ps(0xffff, _mm512_sub_epi32(c##i, k)), \
                                     _mm512_mul_ps(_mm512_set1_ps(xscale[i]), s), b);             \
    _mm512_mask_storeu_ps(y + i * ldy, mask, v);                                                  \
  }
  MCPCLASS_QTILE_STORE(0)
  MCPCLASS_QTILE_STORE(1)
  MCPCLASS_QTILE_STORE(2)
  MCPCLASS_QTILE_STORE(3)
  MCPCLASS_QTILE_STORE(4)
  MCPCLASS_QTILE_STORE(5)
  MCPCLASS_QTILE_STORE(6)
  MCPCLASS_QTILE_STORE(7)
#undef MCPCLASS_QTILE_STORE
}

void qtile_any_rows(const std::int8_t* q, std::size_t depth, std::size_t tile_rows,
                    const float* xscale, const std::int8_t* panel, const float* wscale,
                    const std::int32_t* column_sums, const float* bias, float* y, std::size_t ldy,
                    std::size_t width) {
  with_tile_rows<8>(tile_rows, [&](auto kRows) {
    qtile<kRows()>(q, depth, xscale, panel, wscale, column_sums, bias, y, ldy, width);
  });
}

}  // namespace

QKernel qkernel_avx512_vnni() {
  return {qtile_any_rows, 8};
}

MCPCLASS_ISA_END
}  // namespace mcpclass::kernels::detail

#else

namespace mcpclass::kernels::detail {
QKernel qkernel_avx512_vnni() {
  return {nullptr, 0};
}
}  // namespace mcpclass::kernels::detail

#endif
