// Internal: a trained head as plain data, so inference needs no libtorch call: dense layers
// (ReLU between them) → logits; probabilities = softmax(logits / temperature).
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

namespace mcpclass::classify::detail {

struct DenseLayer {
  std::size_t in = 0;
  std::size_t out = 0;
  std::vector<float> weight;  ///< out × in, row-major.
  std::vector<float> bias;    ///< out.
};

struct HeadModel {
  std::vector<DenseLayer> layers;
  std::vector<std::string> categories;  ///< Logit order.
  double temperature = 1.0;
  std::string encoder_id;  ///< SentenceEncoder::model_id() it was trained on.

  /// softmax(logits(x) / temperature) over `categories`.
  std::vector<double> probabilities(std::span<const float> x, double temperature_override) const;
};

/// Reads `path` (TorchScript head) and `path + ".json"`. Throws ClassifyError.
HeadModel load_head(const std::string& path);

}  // namespace mcpclass::classify::detail
