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

constexpr std::size_t kTileRows = 8, kTilePanels = 3;

// kRows ≤ 8 rows by kPanels ≤ 3 panels of 16 outputs: 24 registers of 16 int32 sums, a weight
// vector per panel (64 bytes: 4 inputs of its 16 outputs), the broadcast inputs. Each weight
// vector serves 8 rows and each broadcast 3 panels: 11 loads and 8 flips per 24 vpdpbusd. A
// one-panel tile (8 loads and flips per 8) reached 248 GOP/s on 2 cores of an AVX-512 VNNI Xeon
// at 128 rows, against ONNX Runtime's 419 (its kernel spans 4 panels by up to 6 rows).
template <std::size_t kRows, std::size_t kPanels, bool kAhead>
MCPCLASS_ISA("avx2,fma,avx512f,avx512bw,avx512vl,avx512vnni")
void qtile(const std::int8_t* q, std::size_t depth, const float* xscale, const std::int8_t* panel,
           const float* wscale, const std::int32_t* column_sums, const float* bias, float* y,
           std::size_t ldy, std::size_t width, const std::int8_t* next, std::size_t next_panels) {
  static_assert(kRows <= kTileRows && kPanels <= kTilePanels);
  __m512i c[kRows][kPanels];
#pragma GCC unroll 8
  for (std::size_t i = 0; i < kRows; ++i)
#pragma GCC unroll 4
    for (std::size_t p = 0; p < kPanels; ++p) c[i][p] = _mm512_setzero_si512();
  const __m512i flip = _mm512_set1_epi8(static_cast<char>(0x80));  // q ^ 0x80 = q + 128 as u8
  const std::size_t stride = depth * kQPanel;
  for (std::size_t g = 0; g < depth; g += kQGroup) {
    __m512i w[kPanels];
#pragma GCC unroll 4
    for (std::size_t p = 0; p < kPanels; ++p) {
      if constexpr (kAhead) {
        if (p < next_panels) _mm_prefetch(next + p * stride + g * kQPanel, _MM_HINT_T1);
      }
      w[p] = _mm512_loadu_si512(panel + p * stride + g * kQPanel);
    }
#pragma GCC unroll 8
    for (std::size_t i = 0; i < kRows; ++i) {
      std::int32_t bytes;
      std::memcpy(&bytes, q + i * depth + g, sizeof bytes);
      const __m512i x = _mm512_xor_si512(_mm512_set1_epi32(bytes), flip);
#pragma GCC unroll 4
      for (std::size_t p = 0; p < kPanels; ++p) c[i][p] = _mm512_dpbusd_epi32(c[i][p], x, w[p]);
    }
  }
#pragma GCC unroll 4
  for (std::size_t p = 0; p < kPanels; ++p) {
    const std::size_t first = p * kQPanel;
    if (first >= width) break;
    const std::size_t lanes = std::min(kQPanel, width - first);
    const __m512i k = _mm512_maskz_slli_epi32(0xffff, _mm512_loadu_si512(column_sums + first), 7);
    const __m512 s = _mm512_loadu_ps(wscale + first), b = _mm512_loadu_ps(bias + first);
    const auto mask = static_cast<__mmask16>((1u << lanes) - 1u);
#pragma GCC unroll 8
    for (std::size_t i = 0; i < kRows; ++i) {
      const __m512 v =
          _mm512_fmadd_ps(_mm512_maskz_cvtepi32_ps(0xffff, _mm512_sub_epi32(c[i][p], k)),
                          _mm512_mul_ps(_mm512_set1_ps(xscale[i]), s), b);
      _mm512_mask_storeu_ps(y + i * ldy + first, mask, v);
    }
  }
}

void qtile_any_rows(const std::int8_t* q, std::size_t depth, std::size_t tile_rows,
                    const float* xscale, const std::int8_t* panel, std::size_t panels,
                    const float* wscale, const std::int32_t* column_sums, const float* bias,
                    float* y, std::size_t ldy, std::size_t width, const std::int8_t* next,
                    std::size_t next_panels) {
  with_tile_rows<kTilePanels>(panels, [&](auto kPanels) {
    with_tile_rows<kTileRows>(tile_rows, [&](auto kRows) {
      with_fetch(next_panels != 0, [&](auto kAhead) {
        qtile<kRows(), kPanels(), kAhead()>(q, depth, xscale, panel, wscale, column_sums, bias, y,
                                            ldy, width, next, next_panels);
      });
    });
  });
}

}  // namespace

QKernel qkernel_avx512_vnni() {
  return {qtile_any_rows, kTileRows, kTilePanels};
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
