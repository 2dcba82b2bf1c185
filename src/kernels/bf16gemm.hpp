// Internal: bfloat16 products, as vdpbf16ps (AVX-512 BF16) computes them: weights rounded to
// bfloat16 once at load (round to nearest even; the float32 copy is not kept), activations
// rounded per row at run time, products of two bfloat16 values exact in float32, and each output
// summed in float32 over input pairs — the odd input of a pair then the even one, one rounding
// each, subnormal sums flushed to zero — as Intel defines the instruction; then the bias. The
// portable tile does exactly that in C++, so every kernel set gives the same bits, and a row's
// result depends on that row alone.
//
// Rounding to bfloat16 keeps 8 of float32's 24 significand bits (relative error ≤ 2^-9 per
// value); the sums stay float32. Values below bfloat16's normal range become zero (vdpbf16ps
// treats subnormal inputs as zero), infinities stay, NaN stays NaN.
#pragma once

#include "kernels/cpu_features.hpp"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace mcpclass::kernels {

/// Outputs of one bfloat16 panel (one 512-bit register of float32 sums).
inline constexpr std::size_t kBPanel = 16;

/// Inputs of one AMX tile row (64 bytes): rows and panels are padded with zeros to a multiple,
/// so that the tiles never need a narrower shape (a zero pair adds +0 to a sum: the same sum,
/// a −0 sum aside, which the bias addition turns into +0 either way).
inline constexpr std::size_t kBDepthStep = 32;

/// `in` rounded up to a multiple of kBDepthStep: the row length of bfloat16 activations.
constexpr std::size_t bf16_depth(std::size_t in) {
  return (in + kBDepthStep - 1) / kBDepthStep * kBDepthStep;
}

/// Panels of `out` outputs.
constexpr std::size_t bpanels_of(std::size_t out) {
  return (out + kBPanel - 1) / kBPanel;
}

/// `value` as bfloat16 bits: round to nearest even, subnormals to signed zero, NaN kept quiet.
/// Thread-safety: pure.
std::uint16_t to_bf16(float value);

/// bfloat16 bits as the float32 they stand for (exact).
float from_bf16(std::uint16_t bits);

/// A linear layer's weights (out × in, as nn.Linear stores them) rounded to bfloat16 and packed:
/// panel p holds, for each pair of inputs (2g, 2g + 1), the pair of each of its kBPanel outputs
/// in turn (zero past `in` and `out`).
struct Bf16Weights {
  std::size_t in = 0, out = 0;
  std::vector<std::uint16_t> packed;

  std::size_t bytes() const { return packed.size() * sizeof(std::uint16_t); }
};

/// `weight` rounded and packed. Thread-safety: pure.
Bf16Weights pack_bf16_weights(std::span<const float> weight, std::size_t in, std::size_t out);

/// Rows of `in` floats (`in` apart) rounded into `xb` (rows × bf16_depth(in), a row's tail zero),
/// as to_bf16 rounds each value; on the AVX-512 sets 16 values at a time (the same bits).
/// Thread-safety: pure.
void bf16_rows(KernelSet set, const float* x, std::size_t rows, std::size_t in, std::uint16_t* xb);

/// y[r][o] = Σ over input pairs of xb[r][k] · W[o][k] (float32, as above) + bias[o] (no bias:
/// nullptr) for `rows` rows of bf16_rows() and the outputs of panels [first_panel, last_panel),
/// y's rows w.out apart; the AVX-512 BF16 tile on set avx512_bf16, AMX tiles on set amx (whose
/// unit sums each pair of products in an order of its own: within a few units of the last place
/// of the others), the portable one below them.
/// Thread-safety: pure; calls on disjoint panels or rows may run concurrently.
void bf16gemm(KernelSet set, const Bf16Weights& w, const float* bias, std::size_t first_panel,
              std::size_t last_panel, const std::uint16_t* xb, std::size_t rows, float* y);

namespace detail {

// One kernel set's tile: rows [0, tile_rows ≤ Bf16Kernel::rows) of xb (depth apart) by `panels`
// ≤ Bf16Kernel::panels adjacent panels from `panel` on (depth · kBPanel values apart), `width` ≤
// panels · kBPanel outputs plus `bias` (panels · kBPanel values) stored to y (ldy apart).
// Meanwhile the first min(next_panels, panels) panels from `next` on (the ones the caller runs
// next) are fetched into L2: a hint that changes no result (next_panels 0: none).
using Bf16Tile = void (*)(const std::uint16_t* xb, std::size_t depth, std::size_t tile_rows,
                          const std::uint16_t* panel, std::size_t panels, const float* bias,
                          float* y, std::size_t ldy, std::size_t width, const std::uint16_t* next,
                          std::size_t next_panels);
/// Panels one tile spans at most, of any set.
inline constexpr std::size_t kBMaxPanels = 4;
struct Bf16Kernel {
  Bf16Tile tile;
  std::size_t rows;        ///< rows of one tile
  std::size_t panels = 1;  ///< panels of one tile (≤ kBMaxPanels)
};
Bf16Kernel bf16kernel_avx512_bf16();
/// The amx set's whole product (AMX tiles span several rows and panels, the tile configuration
/// loaded once per call): bf16gemm()'s arguments; nullptr off x86-64.
using Bf16Gemm = void (*)(const Bf16Weights& w, const float* bias, std::size_t first_panel,
                          std::size_t last_panel, const std::uint16_t* xb, std::size_t rows,
                          float* y);
Bf16Gemm bf16gemm_amx();

/// One row of bf16_rows() (`in` values into bf16_depth(in)); nullptr off x86-64.
using Bf16Row = void (*)(const float* x, std::size_t in, std::uint16_t* xb);
Bf16Row bf16_row_avx512();

/// bf16gemm() with a given kernel (the tests' way to run an emulated one).
void bf16gemm_with(Bf16Kernel kernel, const Bf16Weights& w, const float* bias,
                   std::size_t first_panel, std::size_t last_panel, const std::uint16_t* xb,
                   std::size_t rows, float* y);

/// A subnormal float32 as a zero of its sign (vdpbf16ps's "flush to zero" of its results).
inline float flush_subnormal(float v) {
  return std::fpclassify(v) == FP_SUBNORMAL ? std::copysign(0.0f, v) : v;
}

/// One lane of vdpbf16ps: sum + x1 · w1, then + x0 · w0, each rounded once (the products of two
/// bfloat16 values are exact) and flushed.
inline float bf16_pair_step(float sum, float x0, float w0, float x1, float w1) {
  sum = flush_subnormal(std::fma(x1, w1, sum));
  return flush_subnormal(std::fma(x0, w0, sum));
}

}  // namespace detail

}  // namespace mcpclass::kernels
