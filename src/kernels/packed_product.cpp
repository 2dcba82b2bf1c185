#include "kernels/packed_product.hpp"

#include <algorithm>
#include <cmath>

namespace mcpclass::kernels {

namespace {

// Rows per pass over the panels: a pass's inputs (96 × 768 floats: 288 KiB) stay in L2 while
// every panel of the thread's range runs over them. A multiple of every set's tile rows.
constexpr std::size_t kPassRows = 96;

// The portable tile: the same fused multiply-add chain per output as the AVX2 one.
void tile_portable(const float* a, std::size_t lda, std::size_t tile_rows, const float* b,
                   std::size_t in, const float* bias, float* c, std::size_t ldc,
                   std::size_t width) {
  for (std::size_t i = 0; i < tile_rows; ++i) {
    float acc[kPanel] = {};
    const float* row = a + i * lda;
    for (std::size_t k = 0; k < in; ++k)
      for (std::size_t j = 0; j < kPanel; ++j) acc[j] = std::fma(row[k], b[k * kPanel + j], acc[j]);
    for (std::size_t j = 0; j < width; ++j) c[i * ldc + j] = acc[j] + bias[j];
  }
}

detail::Kernel kernel_for(KernelSet set) {
  switch (set) {
    case KernelSet::portable:
      break;
    case KernelSet::avx2:
    case KernelSet::avx2_vnni:
      return detail::kernel_avx2();
    case KernelSet::avx512:
    case KernelSet::avx512_vnni:
    case KernelSet::avx512_bf16:
      return detail::kernel_avx512();
  }
  return {tile_portable, 6};
}

}  // namespace

std::vector<float> pack_weights(std::span<const float> weight, std::size_t in, std::size_t out) {
  std::vector<float> packed(panels_of(out) * in * kPanel, 0.0f);
  for (std::size_t o = 0; o < out; ++o)
    for (std::size_t k = 0; k < in; ++k)
      packed[((o / kPanel) * in + k) * kPanel + o % kPanel] = weight[o * in + k];
  return packed;
}

void packed_product(KernelSet set, const float* packed, const float* bias, std::size_t in,
                    std::size_t out, std::size_t first_panel, std::size_t last_panel,
                    const float* x, std::size_t rows, float* y) {
  detail::packed_product_with(kernel_for(set), packed, bias, in, out, first_panel, last_panel, x,
                              rows, y);
}

void detail::packed_product_with(Kernel kernel, const float* packed, const float* bias,
                                 std::size_t in, std::size_t out, std::size_t first_panel,
                                 std::size_t last_panel, const float* x, std::size_t rows,
                                 float* y) {
  // A panel's biases, or zeros for a layer without (x + 0 is x: the same bits as no addition).
  alignas(64) float panel_bias[kPanel];
  for (std::size_t pass = 0; pass < rows; pass += kPassRows) {
    const std::size_t pass_end = std::min(rows, pass + kPassRows);
    for (std::size_t p = first_panel; p < last_panel; ++p) {
      const std::size_t col = p * kPanel;
      const std::size_t width = std::min(kPanel, out - col);
      std::fill_n(panel_bias, kPanel, 0.0f);
      if (bias != nullptr) std::copy_n(bias + col, width, panel_bias);
      for (std::size_t r = pass; r < pass_end; r += kernel.rows)
        kernel.tile(x + r * in, in, std::min(kernel.rows, pass_end - r), packed + p * in * kPanel,
                    in, panel_bias, y + r * out + col, out, width);
    }
  }
}

}  // namespace mcpclass::kernels
