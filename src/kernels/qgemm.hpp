// Internal: dynamic int8 products, as ONNX Runtime's quantize_dynamic and CTranslate2 run them:
// weights quantized once at load, symmetric per output channel (scale = max|W[o,:]| / 127, values
// in [-127, 127]); activations quantized per row at run time, symmetric (scale = max|x[r,:]| /
// 127); exact int32 sums; a float epilogue y = sum · (sx[r] · sw[o]) + b[o] in one fused
// multiply-add. Integer sums make a row's result independent of the batch around it and of the
// kernel set: every set gives the same bits.
//
// Why symmetric activations: AVX2 has no u8×s8 product without saturation (vpmaddubsw adds two
// u8·s8 products into int16, and 2 · 255 · 127 > 32767; ONNX Runtime's docs warn of it). With
// both operands in [-127, 127], vpmaddubsw takes |x| as u8 and sign(w, x) as s8, and a pair is at
// most 2 · 127 · 127 = 32258: no saturation, all 8 bits of every weight kept. VNNI's vpdpbusd
// sums u8·s8 products into int32 without saturation but has no sign trick on 512 bits (no
// vpsignb there): it takes x + 128 as u8 and subtracts 128 · Σₖ W[o][k] (`column_sums`) after,
// the same exact sum.
#pragma once

#include "kernels/cpu_features.hpp"

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace mcpclass::kernels {

/// Outputs of one int8 panel (two registers of 8 int32 sums on AVX2).
inline constexpr std::size_t kQPanel = 16;
/// Inputs one int32 lane sums per step (4 bytes of each operand).
inline constexpr std::size_t kQGroup = 4;
/// Inputs of one AMX tile row (64 bytes): rows and panels are padded with zeros to a multiple,
/// so that the tiles never need a narrower shape (a zero adds nothing to an integer sum).
inline constexpr std::size_t kQDepthStep = 64;

/// `in` rounded up to a multiple of kQDepthStep: the row length of quantized activations.
constexpr std::size_t quantized_depth(std::size_t in) {
  return (in + kQDepthStep - 1) / kQDepthStep * kQDepthStep;
}

/// Panels of `out` outputs.
constexpr std::size_t qpanels_of(std::size_t out) {
  return (out + kQPanel - 1) / kQPanel;
}

/// A linear layer's weights (out × in, as nn.Linear stores them) quantized and packed: panel p
/// holds, for each group of kQGroup inputs, the kQGroup bytes of each of its kQPanel outputs in
/// turn (zero past `in` and `out`).
struct QuantizedWeights {
  std::size_t in = 0, out = 0;
  std::vector<std::int8_t> packed;
  std::vector<float> scale;               ///< per output: max|W[o,:]| / 127 (0: all zeros)
  std::vector<std::int32_t> column_sums;  ///< per panel slot (zero past `out`): Σₖ of its bytes

  std::size_t bytes() const {
    return packed.size() + scale.size() * sizeof(float) + column_sums.size() * sizeof(std::int32_t);
  }
};

/// `weight` quantized per output and packed. Throws std::invalid_argument when a weight is not
/// finite (naming the output row). Thread-safety: pure.
QuantizedWeights quantize_weights(std::span<const float> weight, std::size_t in, std::size_t out);

/// Rows of `in` floats (`in` apart) quantized into `q` (rows × quantized_depth(in), the tail of
/// each row zero) with their scales. A row whose largest magnitude is under 1e-30 quantizes to
/// zeros with scale 0 (the products give the bias); a row with a NaN or an infinity gets scale
/// NaN, so its outputs are NaN, as a float product's would be NaN or infinite. Every kernel set
/// gives the same bytes. Thread-safety: pure.
void quantize_rows(KernelSet set, const float* x, std::size_t rows, std::size_t in, std::int8_t* q,
                   float* scale);

/// y[r][o] = Σₖ q[r][k] · W[o][k] · (scale[r] · w.scale[o]) + bias[o] (no bias: nullptr) for
/// the `rows` quantized rows and the outputs of panels [first_panel, last_panel), y's rows
/// w.out apart. Thread-safety: pure; calls on disjoint panels or rows may run concurrently.
void qgemm(KernelSet set, const QuantizedWeights& w, const float* bias, std::size_t first_panel,
           std::size_t last_panel, const std::int8_t* q, const float* scale, std::size_t rows,
           float* y);

namespace detail {

// One kernel set's tile: rows [0, tile_rows ≤ QKernel::rows) of q (depth apart) by `panels` ≤
// QKernel::panels adjacent panels from `panel` on (depth · kQPanel bytes apart), `width` ≤
// panels · kQPanel outputs stored to y (ldy apart); `bias`, `wscale` and `column_sums` hold
// panels · kQPanel values. Meanwhile the first min(next_panels, panels) panels from `next` on
// (the ones the caller runs next) are fetched into L2: a hint that changes no result
// (next_panels 0: none).
using QTile = void (*)(const std::int8_t* q, std::size_t depth, std::size_t tile_rows,
                       const float* xscale, const std::int8_t* panel, std::size_t panels,
                       const float* wscale, const std::int32_t* column_sums, const float* bias,
                       float* y, std::size_t ldy, std::size_t width, const std::int8_t* next,
                       std::size_t next_panels);
/// Panels one tile spans at most, of any set.
inline constexpr std::size_t kQMaxPanels = 4;
struct QKernel {
  QTile tile;
  std::size_t rows;        ///< rows of one tile
  std::size_t panels = 1;  ///< panels of one tile (≤ kQMaxPanels)
};
QKernel qkernel_avx2();
QKernel qkernel_avx2_vnni();
QKernel qkernel_avx512_vnni();
/// The amx set's whole product (its tiles span several rows and panels, and the tile
/// configuration is loaded once per call): qgemm()'s arguments; nullptr off x86-64.
using QGemm = void (*)(const QuantizedWeights& w, const float* bias, std::size_t first_panel,
                       std::size_t last_panel, const std::int8_t* q, const float* scale,
                       std::size_t rows, float* y);
QGemm qgemm_amx();
// Row quantization: maxabs over `in` values, then q = round-to-nearest-even(x · 127 / maxabs).
using QuantizeRow = void (*)(const float* x, std::size_t in, std::int8_t* q, float* scale);
QuantizeRow quantize_row_avx2();
/// qgemm() with a given kernel (the tests' way to run an emulated one).
void qgemm_with(QKernel kernel, const QuantizedWeights& w, const float* bias,
                std::size_t first_panel, std::size_t last_panel, const std::int8_t* q,
                const float* scale, std::size_t rows, float* y);

}  // namespace detail

}  // namespace mcpclass::kernels
