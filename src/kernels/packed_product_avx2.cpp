// The float32 tile of the AVX2 set, in functions compiled for AVX2 + FMA alone, so the rest of
// the library stays portable.
#include "kernels/packed_product.hpp"
#include "kernels/tile_rows.hpp"

#if defined(__x86_64__)

#include "kernels/isa.hpp"

#include <algorithm>

namespace mcpclass::kernels::detail {
MCPCLASS_ISA_BEGIN

namespace {

// Rows of one tile: 6 rows × 16 outputs keep 12 accumulators, 2 weight vectors and the
// broadcast input in the 16 AVX registers.
constexpr std::size_t kTileRows = 6;

// One tile of kRows ≤ 6 rows by one block of a panel. The accumulators are named variables: in
// an array GCC kept them in memory, storing all 12 on every k (28 GFLOP/s instead of 73).
template <std::size_t kRows, bool kAhead>
MCPCLASS_ISA("avx2,fma")
void tile(const float* a, std::size_t lda, const float* b, std::size_t depth, bool resume,
          const float* bias, float* c, std::size_t ldc, std::size_t width, const float* next,
          std::size_t ahead) {
  __m256 c00 = _mm256_setzero_ps(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00;
  __m256 c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00;
  // A last panel narrower than kPanel goes through `sums`: only its outputs are read and stored.
  const bool whole = width == kPanel;
  alignas(32) float sums[kTileRows][kPanel];
  if (!whole) std::fill_n(&sums[0][0], kTileRows * kPanel, 0.0f);
  if (resume) {
    if (!whole)
      for (std::size_t i = 0; i < kRows; ++i) std::copy_n(c + i * ldc, width, sums[i]);
#define MCPCLASS_TILE_LOAD(i)                          \
  if constexpr (kRows > i) {                           \
    const float* from = whole ? c + i * ldc : sums[i]; \
    c##i##0 = _mm256_loadu_ps(from);                   \
    c##i##1 = _mm256_loadu_ps(from + 8);               \
  }
    MCPCLASS_TILE_LOAD(0)
    MCPCLASS_TILE_LOAD(1)
    MCPCLASS_TILE_LOAD(2)
    MCPCLASS_TILE_LOAD(3)
    MCPCLASS_TILE_LOAD(4)
    MCPCLASS_TILE_LOAD(5)
#undef MCPCLASS_TILE_LOAD
  }
  const float *a0 = a, *a1 = a0 + lda, *a2 = a1 + lda, *a3 = a2 + lda, *a4 = a3 + lda,
              *a5 = a4 + lda;
#define MCPCLASS_TILE_ROW(i)                        \
  if constexpr (kRows > i) {                        \
    const __m256 x = _mm256_broadcast_ss(a##i + k); \
    c##i##0 = _mm256_fmadd_ps(x, w0, c##i##0);      \
    c##i##1 = _mm256_fmadd_ps(x, w1, c##i##1);      \
  }
  for (std::size_t k = 0; k < depth; ++k) {
    if constexpr (kAhead) {
      if (k < ahead) _mm_prefetch(reinterpret_cast<const char*>(next + k * kPanel), _MM_HINT_T1);
    }
    const __m256 w0 = _mm256_loadu_ps(b + k * kPanel), w1 = _mm256_loadu_ps(b + k * kPanel + 8);
    MCPCLASS_TILE_ROW(0)
    MCPCLASS_TILE_ROW(1)
    MCPCLASS_TILE_ROW(2)
    MCPCLASS_TILE_ROW(3)
    MCPCLASS_TILE_ROW(4)
    MCPCLASS_TILE_ROW(5)
  }
#undef MCPCLASS_TILE_ROW
  const __m256 b0 = bias ? _mm256_loadu_ps(bias) : _mm256_setzero_ps(),
               b1 = bias ? _mm256_loadu_ps(bias + 8) : _mm256_setzero_ps();
  // Partial sums are stored as they are (+ 0 would turn a −0 into +0).
#define MCPCLASS_TILE_STORE(i)                                             \
  if constexpr (kRows > i) {                                               \
    float* to = whole ? c + i * ldc : sums[i];                             \
    _mm256_storeu_ps(to, bias ? _mm256_add_ps(c##i##0, b0) : c##i##0);     \
    _mm256_storeu_ps(to + 8, bias ? _mm256_add_ps(c##i##1, b1) : c##i##1); \
  }
  MCPCLASS_TILE_STORE(0)
  MCPCLASS_TILE_STORE(1)
  MCPCLASS_TILE_STORE(2)
  MCPCLASS_TILE_STORE(3)
  MCPCLASS_TILE_STORE(4)
  MCPCLASS_TILE_STORE(5)
#undef MCPCLASS_TILE_STORE
  if (!whole)
    for (std::size_t i = 0; i < kRows; ++i) std::copy_n(sums[i], width, c + i * ldc);
}

void tile_any_rows(const float* a, std::size_t lda, std::size_t tile_rows, const float* b,
                   std::size_t depth, bool resume, const float* bias, float* c, std::size_t ldc,
                   std::size_t width, const float* next, std::size_t ahead) {
  with_tile_rows<6>(tile_rows, [&](auto kRows) {
    with_fetch(ahead != 0, [&](auto kAhead) {
      tile<kRows(), kAhead()>(a, lda, b, depth, resume, bias, c, ldc, width, next, ahead);
    });
  });
}

}  // namespace

Kernel kernel_avx2() {
  return {tile_any_rows, kTileRows};
}

MCPCLASS_ISA_END
}  // namespace mcpclass::kernels::detail

#else

namespace mcpclass::kernels::detail {
Kernel kernel_avx2() {
  return {nullptr, 0};
}
}  // namespace mcpclass::kernels::detail

#endif
