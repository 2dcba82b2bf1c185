// The int8 product of the amx set: AMX tiles (amx_tiles.hpp) with tdpbssd, the signed bytes of
// the activations by the signed bytes of the weights into exact int32 sums (no + 128 and column
// sums as vpdpbusd needs), then the float epilogue on 512 bits. The same sums and the same
// epilogue as every set (qgemm.hpp): the same bits.
#include "kernels/qgemm.hpp"

#if defined(__x86_64__)

#include "kernels/amx_tiles.hpp"

namespace mcpclass::kernels::detail {
MCPCLASS_ISA_BEGIN

namespace {

// The float epilogue of a block's sums, stored to y: sum · (scale[r] · w.scale[o]) + bias[o].
struct Int8Store {
  const QuantizedWeights& w;
  const float* bias;
  const float* scale;
  float* y;

  MCPCLASS_ISA("avx2,fma,avx512f,avx512bw,avx512vl")
  void operator()(std::size_t first, std::size_t count, std::size_t panel,
                  const TileSums& sums) const {
    const std::size_t col = panel * kQPanel;
    const std::size_t width = std::min(kQPanel, w.out - col);
    const auto mask = static_cast<__mmask16>((1u << width) - 1u);
    const __m512 s = _mm512_maskz_loadu_ps(mask, w.scale.data() + col);
    const __m512 b =
        bias != nullptr ? _mm512_maskz_loadu_ps(mask, bias + col) : _mm512_setzero_ps();
    for (std::size_t i = 0; i < count; ++i) {
      const __m512 sum = _mm512_maskz_cvtepi32_ps(0xffff, _mm512_load_si512(sums.v + i * 16));
      const __m512 v = _mm512_fmadd_ps(sum, _mm512_mul_ps(_mm512_set1_ps(scale[first + i]), s), b);
      _mm512_mask_storeu_ps(y + (first + i) * w.out + col, mask, v);
    }
  }
};

void qgemm_tiles(const QuantizedWeights& w, const float* bias, std::size_t first_panel,
                 std::size_t last_panel, const std::int8_t* q, const float* scale, std::size_t rows,
                 float* y) {
  const std::size_t depth = quantized_depth(w.in);
  const TileOperands op{reinterpret_cast<const unsigned char*>(q), rows, depth,
                        reinterpret_cast<const unsigned char*>(w.packed.data()), depth * kQPanel};
  tile_product<TileDot::int8>(op, first_panel, last_panel, Int8Store{w, bias, scale, y});
}

}  // namespace

QGemm qgemm_amx() {
  return qgemm_tiles;
}

MCPCLASS_ISA_END
}  // namespace mcpclass::kernels::detail

#else

namespace mcpclass::kernels::detail {
QGemm qgemm_amx() {
  return nullptr;
}
}  // namespace mcpclass::kernels::detail

#endif
