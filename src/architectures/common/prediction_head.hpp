// Internal: ModernBERT's prediction head (ModernBertPredictionHead in modeling_modernbert.py):
// head.dense, classifier_activation, head.norm. Its sequence classifier runs it on the pooled
// row and its token classifier on every token, each before `classifier`.
#pragma once

#include "architectures/common/activations.hpp"
#include "architectures/common/dense_weights.hpp"
#include "architectures/modernbert/modernbert_config.hpp"

#include <cstddef>
#include <vector>

namespace mcpclass::architectures {

/// Thread-safety: immutable after construction; apply() may be called concurrently.
struct PredictionHead {
  kernels::Dense dense;
  HiddenActivation activation = HiddenActivation::gelu;
  kernels::Norm norm;
  float eps = 1e-5f;

  std::size_t parameters() const { return dense.parameters() + norm.parameters(); }
  /// Replaces `rows` rows (a multiple of kRowBlock) of dense.in values by the head's output,
  /// row by row, so a row's result does not depend on the rows around it.
  void apply(std::vector<float>& x, std::size_t rows) const;
};

/// head.dense (with a bias if classifier_bias) and head.norm (with one if norm_bias) of a
/// ModernBERT checkpoint, taken out of `file`; throws ClassifyError naming a bad tensor.
PredictionHead take_prediction_head(checkpoint::CheckpointTensors& file,
                                    const kernels::Compute& compute, const ModernBertConfig& c);

}  // namespace mcpclass::architectures
