// Internal: the dense products and norms of the native transformer encoders and their heads,
// computed so that a text's result cannot depend on the batch around it: every text's
// activation rows start at a multiple of kRowBlock and are padded to one (attention and the
// heads find a text's rows there), linear() computes each output row from that row alone
// (packed_product.hpp), and the norms work row by row.
#pragma once

#include "kernels/activate.hpp"
#include "kernels/bf16gemm.hpp"
#include "kernels/cpu_features.hpp"
#include "kernels/qgemm.hpp"

#include <cstddef>
#include <optional>
#include <span>
#include <vector>

namespace mcpclass::kernels {

/// Rows a text's activations are padded to.
inline constexpr std::size_t kRowBlock = 16;

/// `tokens` rounded up to a multiple of kRowBlock.
constexpr std::size_t padded_rows(std::size_t tokens) {
  return (tokens + kRowBlock - 1) / kRowBlock * kRowBlock;
}

/// How a model's dense layers store their weights and multiply.
enum class Precision {
  f32,   ///< float32 weights, float32 products (packed_product.hpp)
  int8,  ///< int8 weights per output channel, activations quantized per row (qgemm.hpp)
  bf16,  ///< bfloat16 weights and activations, float32 sums (bf16gemm.hpp)
};

/// "f32", "int8", "bf16".
const char* name(Precision p);

/// What a model's products run with, chosen once at load: one kernel set for every layer.
struct Compute {
  KernelSet kernels = KernelSet::portable;
  Precision precision = Precision::f32;

  /// The same kernel set with float32 weights (the layers kept in float: heads, poolers).
  Compute in_float() const { return {kernels, Precision::f32}; }
};

/// The best kernel set of this CPU (capped by MCPCLASS_KERNELS) in float32: what a model gets
/// when its caller names none. Throws std::invalid_argument for a bad MCPCLASS_KERNELS.
Compute default_compute();

/// An nn.Linear's weights, packed for one precision; `bias` is empty for nn.Linear(bias=False).
struct Dense {
  std::size_t in = 0, out = 0;
  KernelSet kernels = KernelSet::portable;
  std::vector<float> weight;   ///< f32: pack_weights() of the out × in weights nn.Linear stores
  QuantizedWeights quantized;  ///< int8: quantize_weights() of them
  Bf16Weights bf16;            ///< bf16: pack_bf16_weights() of them
  std::vector<float> bias;

  std::size_t parameters() const { return in * out + bias.size(); }
  /// Bytes of the packed weights and the bias.
  std::size_t bytes() const {
    return weight.size() * sizeof(float) + quantized.bytes() + bf16.bytes() +
           bias.size() * sizeof(float);
  }
};

/// `weight` (out × in, as nn.Linear stores it) packed as `compute` asks, with `bias` (empty or
/// out values). Throws std::invalid_argument for int8 weights that are not finite.
Dense make_dense(std::span<const float> weight, std::vector<float> bias, std::size_t in,
                 std::size_t out, const Compute& compute);

/// An nn.LayerNorm's weights; `bias` is empty for LayerNorm(bias=False).
struct Norm {
  std::vector<float> weight, bias;

  std::size_t parameters() const { return weight.size() + bias.size(); }
};

/// y = x · Wᵀ + b over `rows` rows with d's kernel set: packed_product() (f32), the rows
/// quantized and qgemm() (int8) or rounded and bf16gemm() (bf16) over all rows, the calling
/// thread's OpenMP team sharing the panels (and, for int8 and bf16, the rows to convert first);
/// with an `activation`, each thread then applies it to the outputs it computed while they are
/// still in its cache (the FFN's bias + GELU in the product's epilogue, instead of one more pass
/// of the team over the whole output). Thread-safety: pure.
void linear(const Dense& d, const float* x, std::size_t rows, float* y,
            std::optional<HiddenActivation> activation = std::nullopt);

/// Each of `rows` rows of x (n.weight.size() values) plus the same row of `residual` (none:
/// nullptr) into x, then LayerNorm of that row into `normed` (which may be x), as layer_norm()
/// computes it; the calling thread's OpenMP team shares the rows, one pass over each (the
/// residual connections and norms between a layer's products). Thread-safety: pure.
void residual_norm(KernelSet set, const Norm& n, float eps, float* x, const float* residual,
                   std::size_t rows, float* normed);

/// LayerNorm over each of `rows` rows of n.weight.size() values in place with `set`'s kernels:
/// mean and variance in double (as precise as torch's float32 kernel or better), summed in four
/// lanes (value i in lane i mod 4, the lanes added (0 + 2) + (1 + 3)) by every set, so every
/// set gives the same bits. Thread-safety: pure.
void layer_norm(KernelSet set, const Norm& n, float eps, float* x, std::size_t rows);

namespace detail {
/// The four lanes of a row's sum added as every set adds them: (0 + 2) + (1 + 3).
inline double lane_sum(const double (&lanes)[4]) {
  return (lanes[0] + lanes[2]) + (lanes[1] + lanes[3]);
}
/// One kernel set's LayerNorm of one row of w values from `in` into `out` (which may be `in`).
using NormRow = void (*)(const Norm& n, float eps, const float* in, float* out, std::size_t w);
NormRow norm_row_avx2();
}  // namespace detail

}  // namespace mcpclass::kernels
