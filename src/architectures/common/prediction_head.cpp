#include "architectures/common/prediction_head.hpp"

#include "architectures/common/dense_weights.hpp"

namespace mcpclass::architectures {

void PredictionHead::apply(std::vector<float>& x, std::size_t rows) const {
  std::vector<float> y(rows * dense.out);
  kernels::linear(dense, x.data(), rows, y.data(), activation);
  kernels::layer_norm(dense.kernels, norm, eps, y.data(), rows);
  x = std::move(y);
}

PredictionHead take_prediction_head(checkpoint::CheckpointTensors& file,
                                    const kernels::Compute& compute, const ModernBertConfig& c) {
  return {take_dense(file, compute, "head.dense", c.hidden, c.hidden, c.classifier_bias),
          c.classifier_activation, take_norm(file, "head.norm", c.hidden, c.norm_bias), c.norm_eps};
}

}  // namespace mcpclass::architectures
