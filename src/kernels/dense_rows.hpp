// Internal: the dense products and norms of the native transformer encoders and their heads,
// computed so that a text's result cannot depend on the batch around it: every text's
// activation rows start at a multiple of kRowBlock and are padded to one (attention and the
// heads find a text's rows there), linear() computes each output row from that row alone
// (packed_product.hpp), and the norms work row by row.
#pragma once

#include <cstddef>
#include <vector>

namespace mcpclass::kernels {

/// Rows a text's activations are padded to.
inline constexpr std::size_t kRowBlock = 16;

/// `tokens` rounded up to a multiple of kRowBlock.
constexpr std::size_t padded_rows(std::size_t tokens) {
  return (tokens + kRowBlock - 1) / kRowBlock * kRowBlock;
}

/// An nn.Linear's weights; `bias` is empty for nn.Linear(bias=False).
struct Dense {
  std::size_t in = 0, out = 0;
  std::vector<float> weight;  ///< pack_weights() of the out × in weights nn.Linear stores.
  std::vector<float> bias;

  std::size_t parameters() const { return in * out + bias.size(); }
};

/// An nn.LayerNorm's weights; `bias` is empty for LayerNorm(bias=False).
struct Norm {
  std::vector<float> weight, bias;

  std::size_t parameters() const { return weight.size() + bias.size(); }
};

/// y = x · Wᵀ + b over `rows` rows: packed_product() over all rows, the calling thread's OpenMP
/// team sharing the panels. Thread-safety: pure.
void linear(const Dense& d, const float* x, std::size_t rows, float* y);

/// Each of `rows` rows of x (n.weight.size() values) plus the same row of `residual` (none:
/// nullptr) into x, then LayerNorm of that row into `normed` (which may be x), as layer_norm()
/// computes it; the calling thread's OpenMP team shares the rows, one pass over each (the
/// residual connections and norms between a layer's products). Thread-safety: pure.
void residual_norm(const Norm& n, float eps, float* x, const float* residual, std::size_t rows,
                   float* normed);

/// LayerNorm over each of `rows` rows of n.weight.size() values in place (mean and variance in
/// double, as precise as torch's float32 kernel or better). Thread-safety: pure.
void layer_norm(const Norm& n, float eps, float* x, std::size_t rows);

}  // namespace mcpclass::kernels
