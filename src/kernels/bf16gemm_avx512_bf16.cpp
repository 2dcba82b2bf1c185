// The bfloat16 tile of the avx512_bf16 set: vdpbf16ps on 512 bits (bf16gemm.hpp), in functions
// compiled for it alone.
#include "kernels/bf16gemm.hpp"
#include "kernels/tile_rows.hpp"

#if defined(__x86_64__)

#include "kernels/isa.hpp"

#include <algorithm>
#include <cstring>

namespace mcpclass::kernels::detail {
MCPCLASS_ISA_BEGIN

namespace {

// kRows ≤ 8 rows by one 16-output panel: one register of 16 float32 sums per row, the panel's
// weights for one input pair (64 bytes: 2 inputs of 16 outputs), the broadcast input pair.
template <std::size_t kRows>
MCPCLASS_ISA("avx2,fma,avx512f,avx512bw,avx512vl,avx512bf16")
void btile(const std::uint16_t* xb, std::size_t depth, const std::uint16_t* panel,
           const float* bias, float* y, std::size_t ldy, std::size_t width) {
  static_assert(kRows <= 8);
  __m512 c0 = _mm512_setzero_ps(), c1 = c0, c2 = c0, c3 = c0, c4 = c0, c5 = c0, c6 = c0, c7 = c0;
  const std::uint16_t* rows[8];
  for (std::size_t i = 0; i < 8; ++i) rows[i] = xb + std::min<std::size_t>(i, kRows - 1) * depth;
#define MCPCLASS_BTILE_ROW(i)                                                              \
  if constexpr (kRows > i) {                                                               \
    std::int32_t pair;                                                                     \
    std::memcpy(&pair, rows[i] + k, sizeof pair);                                          \
    c##i = _mm512_dpbf16_ps(c##i, reinterpret_cast<__m512bh>(_mm512_set1_epi32(pair)), w); \
  }
  for (std::size_t k = 0; k < depth; k += 2) {
    const __m512bh w = reinterpret_cast<__m512bh>(_mm512_loadu_si512(panel + k * kBPanel));
    MCPCLASS_BTILE_ROW(0)
    MCPCLASS_BTILE_ROW(1)
    MCPCLASS_BTILE_ROW(2)
    MCPCLASS_BTILE_ROW(3)
    MCPCLASS_BTILE_ROW(4)
    MCPCLASS_BTILE_ROW(5)
    MCPCLASS_BTILE_ROW(6)
    MCPCLASS_BTILE_ROW(7)
  }
#undef MCPCLASS_BTILE_ROW
  const __m512 b = _mm512_loadu_ps(bias);
  const auto mask = static_cast<__mmask16>((1u << width) - 1u);
#define MCPCLASS_BTILE_STORE(i) \
  if constexpr (kRows > i) _mm512_mask_storeu_ps(y + i * ldy, mask, _mm512_add_ps(c##i, b));
  MCPCLASS_BTILE_STORE(0)
  MCPCLASS_BTILE_STORE(1)
  MCPCLASS_BTILE_STORE(2)
  MCPCLASS_BTILE_STORE(3)
  MCPCLASS_BTILE_STORE(4)
  MCPCLASS_BTILE_STORE(5)
  MCPCLASS_BTILE_STORE(6)
  MCPCLASS_BTILE_STORE(7)
#undef MCPCLASS_BTILE_STORE
}

void btile_any_rows(const std::uint16_t* xb, std::size_t depth, std::size_t tile_rows,
                    const std::uint16_t* panel, const float* bias, float* y, std::size_t ldy,
                    std::size_t width) {
  with_tile_rows<8>(tile_rows,
                    [&](auto kRows) { btile<kRows()>(xb, depth, panel, bias, y, ldy, width); });
}

}  // namespace

Bf16Kernel bf16kernel_avx512_bf16() {
  return {btile_any_rows, 8};
}

MCPCLASS_ISA_END
}  // namespace mcpclass::kernels::detail

#else

namespace mcpclass::kernels::detail {
Bf16Kernel bf16kernel_avx512_bf16() {
  return {nullptr, 0};
}
}  // namespace mcpclass::kernels::detail

#endif
