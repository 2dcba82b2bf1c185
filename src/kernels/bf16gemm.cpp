#include "kernels/bf16gemm.hpp"

#include <algorithm>
#include <bit>
#include <cstring>

namespace mcpclass::kernels {

namespace {

// Rows a pass keeps hot against one panel's weights, as packed_product's passes.
constexpr std::size_t kBPassRows = 64;

// The portable tile: vdpbf16ps lane by lane (bf16gemm.hpp), 4 rows at a time.
void tile_portable(const std::uint16_t* xb, std::size_t depth, std::size_t tile_rows,
                   const std::uint16_t* panel, std::size_t /*panels: 1*/, const float* bias,
                   float* y, std::size_t ldy, std::size_t width, const std::uint16_t* /*next*/,
                   std::size_t /*next_panels: portable C++ has no prefetch*/) {
  for (std::size_t i = 0; i < tile_rows; ++i) {
    const std::uint16_t* row = xb + i * depth;
    float acc[kBPanel] = {};
    for (std::size_t k = 0; k < depth; k += 2) {
      const float x0 = from_bf16(row[k]), x1 = from_bf16(row[k + 1]);
      const std::uint16_t* w = panel + k * kBPanel;
      for (std::size_t j = 0; j < kBPanel; ++j)
        acc[j] =
            detail::bf16_pair_step(acc[j], x0, from_bf16(w[2 * j]), x1, from_bf16(w[2 * j + 1]));
    }
    for (std::size_t j = 0; j < width; ++j) y[i * ldy + j] = acc[j] + bias[j];
  }
}

detail::Bf16Kernel kernel_for(KernelSet set) {
  if (set >= KernelSet::avx512_bf16) return detail::bf16kernel_avx512_bf16();
  return {tile_portable, 4};
}

void bf16_row_portable(const float* x, std::size_t in, std::uint16_t* xb) {
  for (std::size_t k = 0; k < in; ++k) xb[k] = to_bf16(x[k]);
  std::fill(xb + in, xb + bf16_depth(in), std::uint16_t{0});
}

// As quantize_row_for: the AVX-512 row where the set has it, else the portable one.
detail::Bf16Row bf16_row_for(KernelSet set) {
  if (set >= KernelSet::avx512) {
    if (const auto row = detail::bf16_row_avx512(); row != nullptr) return row;
  }
  return bf16_row_portable;
}

}  // namespace

std::uint16_t to_bf16(float value) {
  const auto bits = std::bit_cast<std::uint32_t>(value);
  if (std::isnan(value)) return static_cast<std::uint16_t>((bits >> 16) | 0x40u);  // quiet
  if (std::fpclassify(value) == FP_SUBNORMAL)
    return static_cast<std::uint16_t>((bits >> 16) & 0x8000u);
  // Round to nearest even on the 16 bits dropped; a carry into the exponent is the right
  // rounding (up to infinity past bfloat16's largest finite value). bfloat16 has float32's
  // exponent range, so a normal float32 stays normal.
  const std::uint32_t rounded = bits + 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<std::uint16_t>(rounded >> 16);
}

float from_bf16(std::uint16_t bits) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16);
}

Bf16Weights pack_bf16_weights(std::span<const float> weight, std::size_t in, std::size_t out) {
  Bf16Weights w{in, out, {}};
  const std::size_t depth = bf16_depth(in);
  w.packed.assign(bpanels_of(out) * depth * kBPanel, 0);
  for (std::size_t o = 0; o < out; ++o) {
    std::uint16_t* panel = w.packed.data() + (o / kBPanel) * depth * kBPanel;
    for (std::size_t k = 0; k < in; ++k)
      panel[(k / 2) * kBPanel * 2 + (o % kBPanel) * 2 + k % 2] = to_bf16(weight[o * in + k]);
  }
  return w;
}

void bf16_rows(KernelSet set, const float* x, std::size_t rows, std::size_t in, std::uint16_t* xb) {
  const auto row = bf16_row_for(set);
  const std::size_t depth = bf16_depth(in);
  for (std::size_t r = 0; r < rows; ++r) row(x + r * in, in, xb + r * depth);
}

void bf16gemm(KernelSet set, const Bf16Weights& w, const float* bias, std::size_t first_panel,
              std::size_t last_panel, const std::uint16_t* xb, std::size_t rows, float* y) {
  if (set == KernelSet::amx)
    return detail::bf16gemm_amx()(w, bias, first_panel, last_panel, xb, rows, y);
  detail::bf16gemm_with(kernel_for(set), w, bias, first_panel, last_panel, xb, rows, y);
}

void detail::bf16gemm_with(Bf16Kernel kernel, const Bf16Weights& w, const float* bias,
                           std::size_t first_panel, std::size_t last_panel, const std::uint16_t* xb,
                           std::size_t rows, float* y) {
  const std::size_t depth = bf16_depth(w.in);
  alignas(64) float panel_bias[kBPanel * kBMaxPanels];
  for (std::size_t pass = 0; pass < rows; pass += kBPassRows) {
    const std::size_t pass_end = std::min(rows, pass + kBPassRows);
    for (std::size_t p = first_panel; p < last_panel; p += kernel.panels) {
      const std::size_t panels = std::min(kernel.panels, last_panel - p);
      const std::size_t col = p * kBPanel;
      const std::size_t width = std::min(panels * kBPanel, w.out - col);
      std::fill_n(panel_bias, panels * kBPanel, 0.0f);
      if (bias != nullptr) std::copy_n(bias + col, width, panel_bias);
      // The first row tile brings the next panels into L2, as packed_product's tiles do (the
      // weights stream from memory).
      const std::size_t next_panels = std::min(kernel.panels, last_panel - (p + panels));
      const std::uint16_t* next =
          next_panels != 0 ? w.packed.data() + (p + panels) * depth * kBPanel : nullptr;
      for (std::size_t r = pass; r < pass_end; r += kernel.rows)
        kernel.tile(xb + r * depth, depth, std::min(kernel.rows, pass_end - r),
                    w.packed.data() + p * depth * kBPanel, panels, panel_bias, y + r * w.out + col,
                    w.out, width, next, r == pass ? next_panels : 0);
    }
  }
}

}  // namespace mcpclass::kernels
