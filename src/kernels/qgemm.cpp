#include "kernels/qgemm.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>

namespace mcpclass::kernels {

namespace {

// Rows per pass over the panels: a pass's quantized rows (64 × 3072 bytes at most in BERT-base)
// stay in L2 while every panel of the thread's range runs over them.
constexpr std::size_t kQPassRows = 64;

// Below this largest magnitude a row is taken as zero: 127 / maxabs would overflow float.
constexpr float kTinyRow = 1e-30f;

// The portable tile: the same integer sums and the same float epilogue (one rounding each for
// the conversion, the scale product and the fused multiply-add) as every other set.
void qtile_portable(const std::int8_t* q, std::size_t depth, std::size_t tile_rows,
                    const float* xscale, const std::int8_t* panel, std::size_t /*panels: 1*/,
                    const float* wscale, const std::int32_t*, const float* bias, float* y,
                    std::size_t ldy, std::size_t width, const std::int8_t* /*next*/,
                    std::size_t /*next_panels: portable C++ has no prefetch*/) {
  for (std::size_t i = 0; i < tile_rows; ++i) {
    std::int32_t acc[kQPanel] = {};
    const std::int8_t* row = q + i * depth;
    for (std::size_t g = 0; g < depth; g += kQGroup) {
      const std::int8_t* block = panel + g * kQPanel;
      for (std::size_t j = 0; j < kQPanel; ++j)
        for (std::size_t k = 0; k < kQGroup; ++k)
          acc[j] += std::int32_t{row[g + k]} * std::int32_t{block[j * kQGroup + k]};
    }
    for (std::size_t j = 0; j < width; ++j)
      y[i * ldy + j] = std::fma(static_cast<float>(acc[j]), xscale[i] * wscale[j], bias[j]);
  }
}

void quantize_row_portable(const float* x, std::size_t in, std::int8_t* q, float* scale) {
  float maxabs = 0.0f;
  bool finite = true;
  for (std::size_t k = 0; k < in; ++k) {
    finite = finite && std::isfinite(x[k]);
    maxabs = std::max(maxabs, std::fabs(x[k]));
  }
  const std::size_t depth = quantized_depth(in);
  if (!finite || !(maxabs >= kTinyRow)) {
    std::fill_n(q, depth, std::int8_t{0});
    *scale = finite ? 0.0f : std::numeric_limits<float>::quiet_NaN();
    return;
  }
  const float inv = 127.0f / maxabs;
  for (std::size_t k = 0; k < in; ++k)
    q[k] = static_cast<std::int8_t>(std::clamp(std::nearbyint(x[k] * inv), -127.0f, 127.0f));
  std::fill(q + in, q + depth, std::int8_t{0});
  *scale = maxabs / 127.0f;
}

detail::QKernel kernel_for(KernelSet set) {
  switch (set) {
    case KernelSet::portable:
      break;
    case KernelSet::avx2:
    case KernelSet::avx512:  // AVX-512 has no vpsignb: its int8 runs on 256 bits
      return detail::qkernel_avx2();
    case KernelSet::avx2_vnni:
      return detail::qkernel_avx2_vnni();
    case KernelSet::avx512_vnni:
    case KernelSet::avx512_bf16:
    case KernelSet::amx:  // not reached from qgemm(), which runs qgemm_amx() for this set
      return detail::qkernel_avx512_vnni();
  }
  return {qtile_portable, 4};
}

detail::QuantizeRow quantize_row_for(KernelSet set) {
  return set == KernelSet::portable ? quantize_row_portable : detail::quantize_row_avx2();
}

}  // namespace

QuantizedWeights quantize_weights(std::span<const float> weight, std::size_t in, std::size_t out) {
  QuantizedWeights w{in,
                     out,
                     {},
                     std::vector<float>(out, 0.0f),
                     std::vector<std::int32_t>(qpanels_of(out) * kQPanel, 0)};
  const std::size_t depth = quantized_depth(in);
  w.packed.assign(qpanels_of(out) * depth * kQPanel, 0);
  for (std::size_t o = 0; o < out; ++o) {
    const float* row = weight.data() + o * in;
    float maxabs = 0.0f;
    for (std::size_t k = 0; k < in; ++k) {
      if (!std::isfinite(row[k]))
        throw std::invalid_argument("output " + std::to_string(o) +
                                    " has a weight that is not "
                                    "finite, which int8 cannot represent");
      maxabs = std::max(maxabs, std::fabs(row[k]));
    }
    if (maxabs == 0.0f) continue;  // all zeros: scale 0, zero bytes
    w.scale[o] = maxabs / 127.0f;
    const float inv = 127.0f / maxabs;
    std::int8_t* panel = w.packed.data() + (o / kQPanel) * depth * kQPanel;
    for (std::size_t k = 0; k < in; ++k) {
      const auto byte =
          static_cast<std::int8_t>(std::clamp(std::nearbyint(row[k] * inv), -127.0f, 127.0f));
      panel[(k / kQGroup) * kQPanel * kQGroup + (o % kQPanel) * kQGroup + k % kQGroup] = byte;
      w.column_sums[o] += byte;
    }
  }
  return w;
}

void quantize_rows(KernelSet set, const float* x, std::size_t rows, std::size_t in, std::int8_t* q,
                   float* scale) {
  const auto row = quantize_row_for(set);
  const std::size_t depth = quantized_depth(in);
  for (std::size_t r = 0; r < rows; ++r) row(x + r * in, in, q + r * depth, scale + r);
}

void qgemm(KernelSet set, const QuantizedWeights& w, const float* bias, std::size_t first_panel,
           std::size_t last_panel, const std::int8_t* q, const float* scale, std::size_t rows,
           float* y) {
  if (set == KernelSet::amx)
    return detail::qgemm_amx()(w, bias, first_panel, last_panel, q, scale, rows, y);
  detail::qgemm_with(kernel_for(set), w, bias, first_panel, last_panel, q, scale, rows, y);
}

void detail::qgemm_with(QKernel kernel, const QuantizedWeights& w, const float* bias,
                        std::size_t first_panel, std::size_t last_panel, const std::int8_t* q,
                        const float* scale, std::size_t rows, float* y) {
  const std::size_t depth = quantized_depth(w.in);
  alignas(64) float panel_bias[kQPanel * kQMaxPanels], panel_scale[kQPanel * kQMaxPanels];
  for (std::size_t pass = 0; pass < rows; pass += kQPassRows) {
    const std::size_t pass_end = std::min(rows, pass + kQPassRows);
    for (std::size_t p = first_panel; p < last_panel; p += kernel.panels) {
      const std::size_t panels = std::min(kernel.panels, last_panel - p);
      const std::size_t col = p * kQPanel;
      const std::size_t width = std::min(panels * kQPanel, w.out - col);
      std::fill_n(panel_bias, panels * kQPanel, 0.0f);
      std::fill_n(panel_scale, panels * kQPanel, 0.0f);
      if (bias != nullptr) std::copy_n(bias + col, width, panel_bias);
      std::copy_n(w.scale.data() + col, width, panel_scale);
      // The first row tile brings the next panels into L2, as packed_product's tiles do (the
      // weights stream from memory).
      const std::size_t next_panels = std::min(kernel.panels, last_panel - (p + panels));
      const std::int8_t* next =
          next_panels != 0 ? w.packed.data() + (p + panels) * depth * kQPanel : nullptr;
      for (std::size_t r = pass; r < pass_end; r += kernel.rows)
        kernel.tile(q + r * depth, depth, std::min(kernel.rows, pass_end - r), scale + r,
                    w.packed.data() + p * depth * kQPanel, panels, panel_scale,
                    w.column_sums.data() + col, panel_bias, y + r * w.out + col, w.out, width, next,
                    r == pass ? next_panels : 0);
    }
  }
}

}  // namespace mcpclass::kernels
