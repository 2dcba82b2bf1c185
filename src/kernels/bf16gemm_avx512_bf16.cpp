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

constexpr std::size_t kTileRows = 8, kTilePanels = 3;

// kRows ≤ 8 rows by kPanels ≤ 3 panels of 16 outputs: 24 registers of 16 float32 sums, a
// weight vector per panel (64 bytes: 2 inputs of its 16 outputs), the broadcast input pair:
// 11 loads per 24 vdpbf16ps, where a one-panel tile took 9 per 8. Each output's sum runs over
// the input pairs in order either way (the same bits).
template <std::size_t kRows, std::size_t kPanels, bool kAhead>
MCPCLASS_ISA("avx2,fma,avx512f,avx512bw,avx512vl,avx512bf16")
void btile(const std::uint16_t* xb, std::size_t depth, const std::uint16_t* panel,
           const float* bias, float* y, std::size_t ldy, std::size_t width,
           const std::uint16_t* next, std::size_t next_panels) {
  static_assert(kRows <= kTileRows && kPanels <= kTilePanels);
  __m512 c[kRows][kPanels];
#pragma GCC unroll 8
  for (std::size_t i = 0; i < kRows; ++i)
#pragma GCC unroll 4
    for (std::size_t p = 0; p < kPanels; ++p) c[i][p] = _mm512_setzero_ps();
  const std::size_t stride = depth * kBPanel;
  for (std::size_t k = 0; k < depth; k += 2) {
    __m512bh w[kPanels];
#pragma GCC unroll 4
    for (std::size_t p = 0; p < kPanels; ++p) {
      if constexpr (kAhead) {
        if (p < next_panels)
          _mm_prefetch(reinterpret_cast<const char*>(next + p * stride + k * kBPanel), _MM_HINT_T1);
      }
      w[p] = reinterpret_cast<__m512bh>(_mm512_loadu_si512(panel + p * stride + k * kBPanel));
    }
#pragma GCC unroll 8
    for (std::size_t i = 0; i < kRows; ++i) {
      std::int32_t pair;
      std::memcpy(&pair, xb + i * depth + k, sizeof pair);
      const auto x = reinterpret_cast<__m512bh>(_mm512_set1_epi32(pair));
#pragma GCC unroll 4
      for (std::size_t p = 0; p < kPanels; ++p) c[i][p] = _mm512_dpbf16_ps(c[i][p], x, w[p]);
    }
  }
#pragma GCC unroll 4
  for (std::size_t p = 0; p < kPanels; ++p) {
    const std::size_t first = p * kBPanel;
    if (first >= width) break;
    const std::size_t lanes = std::min(kBPanel, width - first);
    const __m512 b = _mm512_loadu_ps(bias + first);
    const auto mask = static_cast<__mmask16>((1u << lanes) - 1u);
#pragma GCC unroll 8
    for (std::size_t i = 0; i < kRows; ++i)
      _mm512_mask_storeu_ps(y + i * ldy + first, mask, _mm512_add_ps(c[i][p], b));
  }
}

void btile_any_rows(const std::uint16_t* xb, std::size_t depth, std::size_t tile_rows,
                    const std::uint16_t* panel, std::size_t panels, const float* bias, float* y,
                    std::size_t ldy, std::size_t width, const std::uint16_t* next,
                    std::size_t next_panels) {
  with_tile_rows<kTilePanels>(panels, [&](auto kPanels) {
    with_tile_rows<kTileRows>(tile_rows, [&](auto kRows) {
      with_fetch(next_panels != 0, [&](auto kAhead) {
        btile<kRows(), kPanels(), kAhead()>(xb, depth, panel, bias, y, ldy, width, next,
                                            next_panels);
      });
    });
  });
}

// to_bf16 on 16 lanes in integer operations (AVX-512F/BW, so that SIMDe runs it too): NaN
// quieted, subnormals to a zero of their sign, else round to nearest even (zero takes that path:
// its rounding is its sign). Measured on BERT-base bf16 at 32 tokens (Zen 4, 2 threads): the
// scalar rounding was 9.7% of the forward pass.
MCPCLASS_ISA("avx2,fma,avx512f,avx512bw,avx512vl")
__m256i round_lanes(__m512 v) {
  const __m512i bits = _mm512_castps_si512(v);
  const __m512i high = _mm512_srli_epi32(bits, 16);
  const __m512i bias =
      _mm512_add_epi32(_mm512_set1_epi32(0x7fff), _mm512_and_si512(high, _mm512_set1_epi32(1)));
  const __m512i rounded = _mm512_srli_epi32(_mm512_add_epi32(bits, bias), 16);
  const __m512i magnitude = _mm512_and_si512(bits, _mm512_set1_epi32(0x7fffffff));
  const __mmask16 subnormal = _mm512_cmpgt_epi32_mask(_mm512_set1_epi32(0x00800000), magnitude);
  const __mmask16 nan = _mm512_cmpgt_epi32_mask(magnitude, _mm512_set1_epi32(0x7f800000));
  __m512i out = _mm512_mask_blend_epi32(subnormal, rounded,
                                        _mm512_and_si512(high, _mm512_set1_epi32(0x8000)));
  out = _mm512_mask_blend_epi32(nan, out, _mm512_or_si512(high, _mm512_set1_epi32(0x40)));
  // Every lane is at most 0xffff, so packus's saturation is exact; it packs within 128-bit
  // lanes, so quadwords 0, 2, 4, 6 hold the 16 values in order.
  const __m512i packed = _mm512_packus_epi32(out, out);
  return _mm512_castsi512_si256(
      _mm512_permutexvar_epi64(_mm512_set_epi64(6, 4, 2, 0, 6, 4, 2, 0), packed));
}

MCPCLASS_ISA("avx2,fma,avx512f,avx512bw,avx512vl")
void bf16_row(const float* x, std::size_t in, std::uint16_t* xb) {
  std::size_t k = 0;
  for (; k + 16 <= in; k += 16)
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(xb + k), round_lanes(_mm512_loadu_ps(x + k)));
  if (k < in) {
    const auto mask = static_cast<__mmask16>((1u << (in - k)) - 1u);
    alignas(32) std::uint16_t tail[16];
    _mm256_store_si256(reinterpret_cast<__m256i*>(tail),
                       round_lanes(_mm512_maskz_loadu_ps(mask, x + k)));
    std::copy(tail, tail + (in - k), xb + k);
  }
  std::fill(xb + in, xb + bf16_depth(in), std::uint16_t{0});
}

}  // namespace

Bf16Row bf16_row_avx512() {
  return bf16_row;
}

Bf16Kernel bf16kernel_avx512_bf16() {
  return {btile_any_rows, kTileRows, kTilePanels};
}

MCPCLASS_ISA_END
}  // namespace mcpclass::kernels::detail

#else

namespace mcpclass::kernels::detail {
Bf16Kernel bf16kernel_avx512_bf16() {
  return {nullptr, 0};
}
Bf16Row bf16_row_avx512() {
  return nullptr;
}
}  // namespace mcpclass::kernels::detail

#endif
