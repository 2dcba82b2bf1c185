// Internal: a BERT-family sequence classifier (BertForSequenceClassification and the RoBERTa
// variants): the encoder (bert_encoder.hpp), then the first token through the pooler (BERT) or
// the classification head's dense (RoBERTa), tanh, then the output projection to one logit a
// label.
#pragma once

#include "architectures/bert/bert_config.hpp"
#include "architectures/bert/bert_encoder.hpp"

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace mcpclass::architectures {

/// Thread-safety: immutable after construction; logits() may be called concurrently.
class BertSequenceModel {
 public:
  /// Reads `dir`'s config.json and weights (checkpoint_files.hpp), with the LoRA adapter of
  /// `adapter_dir` merged in when it is not empty. Throws ClassifyError naming the file and
  /// tensor for an unsupported config (a token classifier too), a missing, misshapen or
  /// non-finite tensor. `progress`: (bytes of tensors read, bytes in all), as
  /// read_checkpoint_tensors reports it. `compute`: the kernel set and precision of the
  /// encoder's products (the head stays in float32).
  explicit BertSequenceModel(const std::string& dir, const std::string& adapter_dir = {},
                             const checkpoint::CheckpointProgress& progress = {},
                             const kernels::Compute& compute = kernels::default_compute());

  /// A task of several over one base: `encoder` shared with the others (its weights held
  /// once), `deltas` the task's LoRA updates of its layers, the pooler and classifier taken out
  /// of `head` (the base's head tensors with those the task's adapter saves whole). Throws as
  /// the other constructor for a head that does not fit.
  BertSequenceModel(BertConfig config, std::shared_ptr<const BertEncoder> encoder,
                    EncoderDeltas deltas, checkpoint::CheckpointTensors& head,
                    const kernels::Compute& compute);

  const BertConfig& config() const { return config_; }
  /// The encoder, to share with other tasks.
  const std::shared_ptr<const BertEncoder>& encoder() const { return encoder_; }
  /// A task's LoRA updates of the encoder's layers (empty: the encoder as it is).
  const EncoderDeltas& deltas() const { return deltas_; }

  /// Weights held (every tensor's elements).
  std::size_t parameters() const;

  /// Activation rows a text of `tokens` tokens takes in a batch (its tokens, padded to a block).
  static std::size_t rows_for(std::size_t tokens) { return kernels::padded_rows(tokens); }

  /// Row-major `inputs.size() × labels` logits; a batch gives every text exactly (bit for bit)
  /// its single-text result (BertEncoder::hidden_states). `threads`: OpenMP threads of this
  /// call's products.
  std::vector<float> logits(std::span<const BertInput> inputs, std::size_t threads) const;

 private:
  BertSequenceModel(BertCheckpoint checkpoint, const kernels::Compute& compute);

  BertConfig config_;
  std::shared_ptr<const BertEncoder> encoder_;
  EncoderDeltas deltas_;   ///< A task's updates; empty: the encoder as it is.
  kernels::Dense pooler_;  ///< BERT's pooler.dense, RoBERTa's classifier.dense: then tanh.
  kernels::Dense head_;    ///< classifier (BERT) or classifier.out_proj (RoBERTa).
};

}  // namespace mcpclass::architectures
