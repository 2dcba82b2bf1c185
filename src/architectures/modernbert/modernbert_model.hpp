// Internal: a ModernBERT sequence classifier (ModernBertForSequenceClassification: ModernBERT,
// mmBERT): the encoder (modernbert_encoder.hpp), then the first token or the mean of all tokens
// (classifier_pooling) through the prediction head (prediction_head.hpp: head.dense,
// classifier_activation, head.norm) and `classifier`.
#pragma once

#include "architectures/common/prediction_head.hpp"
#include "architectures/modernbert/modernbert_encoder.hpp"
#include "kernels/dense_rows.hpp"

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace mcpclass::architectures {

/// Thread-safety: immutable after construction; every method may be called concurrently.
class ModernBertModel {
 public:
  /// Reads `dir`'s config.json and weights (checkpoint_files.hpp). Throws ClassifyError naming
  /// the file and tensor for an unsupported config (a token classifier too), a missing,
  /// misshapen or non-finite tensor, or a tensor the config does not account for (e.g. biases
  /// with *_bias false).
  explicit ModernBertModel(const std::string& dir, const std::string& adapter_dir = {},
                           const checkpoint::CheckpointProgress& progress = {},
                           const kernels::Compute& compute = kernels::default_compute());

  /// A task of several over one base: `encoder` shared with the others (its weights held
  /// once), `deltas` the task's LoRA updates of its layers, the head taken out of `head` (the
  /// base's head tensors with those the task's adapter saves whole). Throws as the other
  /// constructor for a head that does not fit.
  ModernBertModel(ModernBertConfig config, std::shared_ptr<const ModernBertEncoder> encoder,
                  EncoderDeltas deltas, checkpoint::CheckpointTensors& head,
                  const kernels::Compute& compute);

  const ModernBertConfig& config() const { return config_; }
  /// The encoder, to share with other tasks.
  const std::shared_ptr<const ModernBertEncoder>& encoder() const { return encoder_; }
  /// A task's LoRA updates of the encoder's layers (empty: the encoder as it is).
  const EncoderDeltas& deltas() const { return deltas_; }

  /// Weights held (every tensor's elements).
  std::size_t parameters() const;

  /// The encoder's output for each text's tokens (ModernBertEncoder::hidden_states).
  HiddenStates hidden_states(std::span<const BertInput> inputs, std::size_t threads) const {
    return encoder_->hidden_states(inputs, threads, deltas_.empty() ? nullptr : &deltas_);
  }

  /// Row-major `inputs.size() × labels` logits of the sequence head, as hidden_states().
  std::vector<float> logits(std::span<const BertInput> inputs, std::size_t threads) const;

 private:
  ModernBertModel(ModernBertCheckpoint checkpoint, const kernels::Compute& compute);

  ModernBertConfig config_;
  std::shared_ptr<const ModernBertEncoder> encoder_;
  EncoderDeltas deltas_;  ///< A task's updates; empty: the encoder as it is.
  PredictionHead head_;
  kernels::Dense classifier_;
};

}  // namespace mcpclass::architectures
