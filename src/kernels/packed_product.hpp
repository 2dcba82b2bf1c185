// Internal: the float32 dense products of the native transformer encoders, on weights packed
// once at load into panels of kPanel outputs, by a kernel whose every output is one fused
// multiply-add chain over the inputs in order: a row's result depends on nothing but that row
// (neither the other rows of the product, nor their number, nor how rows and panels are shared
// among threads), and every kernel set gives the same bits (std::fma rounds once, as vfmadd does).
// One file per instruction set: packed_product.cpp (dispatch, the portable tile),
// packed_product_avx2.cpp (6 rows × 16 outputs), packed_product_avx512.cpp (12 × 32, and 12 × 16
// for a last odd panel).
//
// Why not oneDNN: its sgemm packs both operands on every call (a 16-row product by 128 outputs
// repacked its weights once per row block), and oneDNN 2.6's matmul and inner-product
// primitives run that same gemm on AVX2 (format_tag::any keeps the weights plain: no reordered
// layout exists there before AVX-512), while one sgemm over all rows picks its kernel and blocking
// by shape, so a text's result would change with the batch around it. Measured on the 2-core
// AVX2 EPYC (one BERT-base FFN product, 128 rows × 768 → 3072, 1 thread): sgemm in 16-row
// blocks 10.3 ms (58.6 GFLOP/s), the matmul primitive in 16-row blocks 15.7 ms, this kernel
// 8.2 ms (73.4 GFLOP/s, 94% of one core's fp32 peak).
#pragma once

#include "kernels/cpu_features.hpp"

#include <cstddef>
#include <span>
#include <vector>

namespace mcpclass::kernels {

/// Outputs of one panel: the AVX2 kernel keeps a row's kPanel sums in two 8-float registers.
inline constexpr std::size_t kPanel = 16;

/// `weight` (out × in, as nn.Linear stores it) packed for packed_product(): panel p holds, for
/// each input k in order, the weights of outputs p·kPanel … p·kPanel + kPanel − 1 (zero past
/// `out`). Thread-safety: pure.
std::vector<float> pack_weights(std::span<const float> weight, std::size_t in, std::size_t out);

/// Panels of `out` outputs.
constexpr std::size_t panels_of(std::size_t out) {
  return (out + kPanel - 1) / kPanel;
}

/// y[r][o] = Σₖ x[r][k] · W[o][k] + bias[o] (no bias: nullptr) for the `rows` rows of x (`in`
/// apart) and the outputs of panels [first_panel, last_panel) of `packed` (pack_weights of W),
/// y's rows `out` apart, with the kernels of `set`. Each sum starts at 0, adds k = 0, 1, … with
/// one fused multiply-add each, then the bias. Thread-safety: pure; calls on disjoint panels or
/// rows may run concurrently.
void packed_product(KernelSet set, const float* packed, const float* bias, std::size_t in,
                    std::size_t out, std::size_t first_panel, std::size_t last_panel,
                    const float* x, std::size_t rows, float* y);

namespace detail {

/// One kernel set's tile: rows [0, tile_rows ≤ Kernel::rows) of a (lda apart) by `depth` inputs
/// of a panel from b on, into `width` ≤ kPanel outputs of c (ldc apart). The sums start at 0, or
/// with `resume` at the partial sums c holds (an earlier block of inputs), and continue the same
/// fused multiply-add chain; then, with a `bias` (kPanel values), the sums plus the bias are
/// stored, or without (nullptr) the partial sums themselves. Meanwhile the first min(ahead, depth)
/// inputs of the panel block at `next` (the one the caller runs next) are fetched into L2: a hint
/// that changes no result (ahead 0: none).
using Tile = void (*)(const float* a, std::size_t lda, std::size_t tile_rows, const float* b,
                      std::size_t depth, bool resume, const float* bias, float* c, std::size_t ldc,
                      std::size_t width, const float* next, std::size_t ahead);
/// The same over two adjacent panels at once: the first from b on, the second `panel_stride`
/// floats later, into outputs [0, kPanel) and [kPanel, kPanel + width2) of c (and `next`'s second
/// panel as far after it).
using WideTile = void (*)(const float* a, std::size_t lda, std::size_t tile_rows, const float* b,
                          std::size_t panel_stride, std::size_t depth, bool resume,
                          const float* bias, float* c, std::size_t ldc, std::size_t width2,
                          const float* next, std::size_t ahead);
struct Kernel {
  Tile tile;
  std::size_t rows;         ///< rows of one tile (of `tile` and of `wide`)
  WideTile wide = nullptr;  ///< where a set has one: two panels per tile
};
Kernel kernel_avx2();
Kernel kernel_avx512();
/// packed_product() with a given kernel (the tests' way to run an emulated one).
void packed_product_with(Kernel kernel, const float* packed, const float* bias, std::size_t in,
                         std::size_t out, std::size_t first_panel, std::size_t last_panel,
                         const float* x, std::size_t rows, float* y);

}  // namespace detail

}  // namespace mcpclass::kernels
