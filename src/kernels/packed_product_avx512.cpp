// The float32 tile of the avx512 sets: 8 rows × 16 outputs, one 512-bit accumulator per row (the
// same multiply-add chain per output as every set), in functions compiled for AVX-512 alone.
#include "kernels/packed_product.hpp"
#include "kernels/tile_rows.hpp"

#if defined(__x86_64__)

#include "kernels/isa.hpp"

#include <algorithm>

namespace mcpclass::kernels::detail {
MCPCLASS_ISA_BEGIN

namespace {

// kRows ≤ 8 rows by one block of a panel: per input, one load of the panel's 16 weights and one
// fused multiply-add per row with the row's value broadcast (an embedded broadcast from memory).
template <std::size_t kRows>
MCPCLASS_ISA("avx2,fma,avx512f,avx512bw,avx512vl")
void tile(const float* a, std::size_t lda, const float* b, std::size_t depth, bool resume,
          const float* bias, float* c, std::size_t ldc, std::size_t width) {
  static_assert(kRows <= 8);
  __m512 c0 = _mm512_setzero_ps(), c1 = c0, c2 = c0, c3 = c0, c4 = c0, c5 = c0, c6 = c0, c7 = c0;
  // A last panel narrower than kPanel: only its outputs are read and stored.
  const auto mask = static_cast<__mmask16>((1u << width) - 1u);
  if (resume) {
#define MCPCLASS_TILE_LOAD(i) \
  if constexpr (kRows > i) c##i = _mm512_maskz_loadu_ps(mask, c + i * ldc);
    MCPCLASS_TILE_LOAD(0)
    MCPCLASS_TILE_LOAD(1)
    MCPCLASS_TILE_LOAD(2)
    MCPCLASS_TILE_LOAD(3)
    MCPCLASS_TILE_LOAD(4)
    MCPCLASS_TILE_LOAD(5)
    MCPCLASS_TILE_LOAD(6)
    MCPCLASS_TILE_LOAD(7)
#undef MCPCLASS_TILE_LOAD
  }
  const float* rows[8];
  for (std::size_t i = 0; i < 8; ++i) rows[i] = a + std::min<std::size_t>(i, kRows - 1) * lda;
#define MCPCLASS_TILE_ROW(i) \
  if constexpr (kRows > i) c##i = _mm512_fmadd_ps(_mm512_set1_ps(rows[i][k]), w, c##i);
  for (std::size_t k = 0; k < depth; ++k) {
    const __m512 w = _mm512_loadu_ps(b + k * kPanel);
    MCPCLASS_TILE_ROW(0)
    MCPCLASS_TILE_ROW(1)
    MCPCLASS_TILE_ROW(2)
    MCPCLASS_TILE_ROW(3)
    MCPCLASS_TILE_ROW(4)
    MCPCLASS_TILE_ROW(5)
    MCPCLASS_TILE_ROW(6)
    MCPCLASS_TILE_ROW(7)
  }
#undef MCPCLASS_TILE_ROW
  // Partial sums are stored as they are (+ 0 would turn a −0 into +0).
  const __m512 bv = bias ? _mm512_loadu_ps(bias) : _mm512_setzero_ps();
#define MCPCLASS_TILE_STORE(i) \
  if constexpr (kRows > i)     \
    _mm512_mask_storeu_ps(c + i * ldc, mask, bias ? _mm512_add_ps(c##i, bv) : c##i);
  MCPCLASS_TILE_STORE(0)
  MCPCLASS_TILE_STORE(1)
  MCPCLASS_TILE_STORE(2)
  MCPCLASS_TILE_STORE(3)
  MCPCLASS_TILE_STORE(4)
  MCPCLASS_TILE_STORE(5)
  MCPCLASS_TILE_STORE(6)
  MCPCLASS_TILE_STORE(7)
#undef MCPCLASS_TILE_STORE
}

void tile_any_rows(const float* a, std::size_t lda, std::size_t tile_rows, const float* b,
                   std::size_t depth, bool resume, const float* bias, float* c, std::size_t ldc,
                   std::size_t width) {
  with_tile_rows<8>(
      tile_rows, [&](auto kRows) { tile<kRows()>(a, lda, b, depth, resume, bias, c, ldc, width); });
}

}  // namespace

Kernel kernel_avx512() {
  return {tile_any_rows, 8};
}

MCPCLASS_ISA_END
}  // namespace mcpclass::kernels::detail

#else

namespace mcpclass::kernels::detail {
Kernel kernel_avx512() {
  return {nullptr, 0};
}
}  // namespace mcpclass::kernels::detail

#endif
