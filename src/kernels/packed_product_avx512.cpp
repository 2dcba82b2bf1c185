// The float32 tiles of the avx512 sets: 12 rows × 32 outputs (two panels), and 12 × 16 for a
// last odd panel, one 512-bit accumulator per row and panel (the same multiply-add chain per
// output as every set), in functions compiled for AVX-512 alone. Two panels per tile: per input,
// 2 weight loads and 12 broadcasts feed 24 fused multiply-adds (the 8 × 16 tile this replaces
// needed 9 loads for 8, so the load ports bounded it before the two FMA ports did); 24
// accumulators, 2 weight vectors and a broadcast fit the 32 registers.
#include "kernels/packed_product.hpp"
#include "kernels/tile_rows.hpp"

#if defined(__x86_64__)

#include "kernels/isa.hpp"

#include <algorithm>

namespace mcpclass::kernels::detail {
MCPCLASS_ISA_BEGIN

namespace {

constexpr std::size_t kTileRows = 12;

// The accumulators are named variables (in an array GCC keeps them in memory): c<row><panel>.
#define MCPCLASS_TILE_ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)

// kRows ≤ 12 rows by one block of kPanels ≤ 2 panels (the second panel_stride floats after the
// first, `width2` of its outputs kept). Per input: the panels' weights loaded once, each row's
// value broadcast, one fused multiply-add per row and panel.
template <std::size_t kRows, std::size_t kPanels, bool kAhead>
MCPCLASS_ISA("avx2,fma,avx512f,avx512bw,avx512vl")
void tile(const float* a, std::size_t lda, const float* b, std::size_t panel_stride,
          std::size_t depth, bool resume, const float* bias, float* c, std::size_t ldc,
          std::size_t width0, std::size_t width2, const float* next, std::size_t ahead) {
  static_assert(kRows <= kTileRows && kPanels >= 1 && kPanels <= 2);
#define MCPCLASS_TILE_DECLARE(i) __m512 c##i##0 = _mm512_setzero_ps(), c##i##1 = c##i##0;
  MCPCLASS_TILE_ROWS(MCPCLASS_TILE_DECLARE)
#undef MCPCLASS_TILE_DECLARE
  // A panel narrower than kPanel: only its outputs are read and stored.
  const auto mask0 = static_cast<__mmask16>((1u << width0) - 1u);
  const auto mask1 = static_cast<__mmask16>((1u << width2) - 1u);
  if (resume) {
#define MCPCLASS_TILE_LOAD(i)                                                                \
  if constexpr (kRows > i) {                                                                 \
    c##i##0 = _mm512_maskz_loadu_ps(mask0, c + i * ldc);                                     \
    if constexpr (kPanels > 1) c##i##1 = _mm512_maskz_loadu_ps(mask1, c + i * ldc + kPanel); \
  }
    MCPCLASS_TILE_ROWS(MCPCLASS_TILE_LOAD)
#undef MCPCLASS_TILE_LOAD
  }
  const float* rows[kTileRows];
  for (std::size_t i = 0; i < kTileRows; ++i)
    rows[i] = a + std::min<std::size_t>(i, kRows - 1) * lda;
  const float* b1 = b + panel_stride;
#define MCPCLASS_TILE_ROW(i)                                              \
  if constexpr (kRows > i) {                                              \
    const __m512 x = _mm512_set1_ps(rows[i][k]);                          \
    c##i##0 = _mm512_fmadd_ps(x, w0, c##i##0);                            \
    if constexpr (kPanels > 1) c##i##1 = _mm512_fmadd_ps(x, w1, c##i##1); \
  }
  for (std::size_t k = 0; k < depth; ++k) {
    if constexpr (kAhead) {
      if (k < ahead) {
        _mm_prefetch(reinterpret_cast<const char*>(next + k * kPanel), _MM_HINT_T1);
        if constexpr (kPanels > 1)
          _mm_prefetch(reinterpret_cast<const char*>(next + panel_stride + k * kPanel),
                       _MM_HINT_T1);
      }
    }
    const __m512 w0 = _mm512_loadu_ps(b + k * kPanel);
    [[maybe_unused]] const __m512 w1 =
        kPanels > 1 ? _mm512_loadu_ps(b1 + k * kPanel) : _mm512_setzero_ps();
    MCPCLASS_TILE_ROWS(MCPCLASS_TILE_ROW)
  }
#undef MCPCLASS_TILE_ROW
  // Partial sums are stored as they are (+ 0 would turn a −0 into +0).
  const __m512 bv0 = bias ? _mm512_loadu_ps(bias) : _mm512_setzero_ps();
  const __m512 bv1 = bias && kPanels > 1 ? _mm512_loadu_ps(bias + kPanel) : _mm512_setzero_ps();
#define MCPCLASS_TILE_STORE(i)                                                               \
  if constexpr (kRows > i) {                                                                 \
    _mm512_mask_storeu_ps(c + i * ldc, mask0, bias ? _mm512_add_ps(c##i##0, bv0) : c##i##0); \
    if constexpr (kPanels > 1)                                                               \
      _mm512_mask_storeu_ps(c + i * ldc + kPanel, mask1,                                     \
                            bias ? _mm512_add_ps(c##i##1, bv1) : c##i##1);                   \
  }
  MCPCLASS_TILE_ROWS(MCPCLASS_TILE_STORE)
#undef MCPCLASS_TILE_STORE
}

#undef MCPCLASS_TILE_ROWS

void tile_any_rows(const float* a, std::size_t lda, std::size_t tile_rows, const float* b,
                   std::size_t depth, bool resume, const float* bias, float* c, std::size_t ldc,
                   std::size_t width, const float* next, std::size_t ahead) {
  with_tile_rows<kTileRows>(tile_rows, [&](auto kRows) {
    with_fetch(ahead != 0, [&](auto kAhead) {
      tile<kRows(), 1, kAhead()>(a, lda, b, 0, depth, resume, bias, c, ldc, width, 0, next, ahead);
    });
  });
}

void wide_any_rows(const float* a, std::size_t lda, std::size_t tile_rows, const float* b,
                   std::size_t panel_stride, std::size_t depth, bool resume, const float* bias,
                   float* c, std::size_t ldc, std::size_t width2, const float* next,
                   std::size_t ahead) {
  with_tile_rows<kTileRows>(tile_rows, [&](auto kRows) {
    with_fetch(ahead != 0, [&](auto kAhead) {
      tile<kRows(), 2, kAhead()>(a, lda, b, panel_stride, depth, resume, bias, c, ldc, kPanel,
                                 width2, next, ahead);
    });
  });
}

}  // namespace

Kernel kernel_avx512() {
  return {tile_any_rows, kTileRows, wide_any_rows};
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
