// The bfloat16 product of the amx set: AMX tiles (amx_tiles.hpp) with tdpbf16ps, float32 sums
// of bfloat16 pairs, then the bias on 512 bits. The unit adds each pair's two products to a sum
// in an order of its own (it matches neither vdpbf16ps's odd-then-even order nor one rounding
// of the exact pair: measured on a Xeon with AMX, 24 of 256 sums of 16 pairs differ from either
// in the last place), so this set's bits are its own: within a few units of the last place of
// the others (test_bf16gemm), and still a row's result depends on that row alone.
#include "kernels/bf16gemm.hpp"

#if defined(__x86_64__)

#include "kernels/amx_tiles.hpp"

namespace mcpclass::kernels::detail {
MCPCLASS_ISA_BEGIN

namespace {

// The bias added to a block's sums, stored to y.
struct Bf16Store {
  const Bf16Weights& w;
  const float* bias;
  float* y;

  MCPCLASS_ISA("avx2,fma,avx512f,avx512bw,avx512vl")
  void operator()(std::size_t first, std::size_t count, std::size_t panel,
                  const TileSums& sums) const {
    const std::size_t col = panel * kBPanel;
    const std::size_t width = std::min(kBPanel, w.out - col);
    const auto mask = static_cast<__mmask16>((1u << width) - 1u);
    const __m512 b =
        bias != nullptr ? _mm512_maskz_loadu_ps(mask, bias + col) : _mm512_setzero_ps();
    for (std::size_t i = 0; i < count; ++i) {
      const __m512 sum = _mm512_castsi512_ps(_mm512_load_si512(sums.v + i * 16));
      _mm512_mask_storeu_ps(y + (first + i) * w.out + col, mask, _mm512_add_ps(sum, b));
    }
  }
};

void bf16gemm_tiles(const Bf16Weights& w, const float* bias, std::size_t first_panel,
                    std::size_t last_panel, const std::uint16_t* xb, std::size_t rows, float* y) {
  const std::size_t depth = bf16_depth(w.in);
  const TileOperands op{reinterpret_cast<const unsigned char*>(xb), rows,
                        depth * sizeof(std::uint16_t),
                        reinterpret_cast<const unsigned char*>(w.packed.data()),
                        depth * kBPanel * sizeof(std::uint16_t)};
  tile_product<TileDot::bf16>(op, first_panel, last_panel, Bf16Store{w, bias, y});
}

}  // namespace

Bf16Gemm bf16gemm_amx() {
  return bf16gemm_tiles;
}

MCPCLASS_ISA_END
}  // namespace mcpclass::kernels::detail

#else

namespace mcpclass::kernels::detail {
Bf16Gemm bf16gemm_amx() {
  return nullptr;
}
}  // namespace mcpclass::kernels::detail

#endif
