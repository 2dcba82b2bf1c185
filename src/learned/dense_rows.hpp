// Internal: the dense products of the native transformer encoders and their heads, computed so
// that a text's result cannot depend on the batch around it: every text's activation rows start
// at a multiple of kRowBlock and are padded to one, and linear() runs one sgemm per block, so
// every product has the same shape whatever the batch (oneDNN picks kernels by shape).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace mcpclass::learned::detail {

/// Rows a text's activations are padded to.
inline constexpr std::size_t kRowBlock = 16;

/// `tokens` rounded up to a multiple of kRowBlock.
constexpr std::size_t padded_rows(std::size_t tokens) {
  return (tokens + kRowBlock - 1) / kRowBlock * kRowBlock;
}

/// An nn.Linear's weights.
struct Dense {
  std::size_t in = 0, out = 0;
  std::vector<float> weight;  ///< out × in, as nn.Linear stores it.
  std::vector<float> bias;

  std::size_t parameters() const { return weight.size() + bias.size(); }
};

struct CheckpointTensors;

/// `name.weight` (out × in) and `name.bias` (out) taken out of `file` (CheckpointTensors::take).
Dense take_dense(CheckpointTensors& file, const std::string& name, std::size_t in, std::size_t out);

/// y = x · Wᵀ + b over `rows` rows (a multiple of kRowBlock), one sgemm per block of kRowBlock
/// rows. Throws ClassifyError if oneDNN fails.
void linear(const Dense& d, const float* x, std::size_t rows, float* y);

}  // namespace mcpclass::learned::detail
