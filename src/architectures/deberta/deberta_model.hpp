// Internal: a DeBERTa-v2/v3 sequence classifier (DebertaV2ForSequenceClassification: the
// jailbreak and prompt-injection detectors fine-tuned from microsoft/deberta-v3-base, NLI
// models), as modeling_deberta_v2.py builds it: the encoder (deberta_encoder.hpp), then
// ContextPooler (the first token through pooler.dense and pooler_hidden_act) and the classifier.
#pragma once

#include "architectures/deberta/deberta_encoder.hpp"

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace mcpclass::architectures {

/// Thread-safety: immutable after construction; logits() may be called concurrently.
class DebertaModel {
 public:
  /// Reads `dir`'s config.json and weights, with the LoRA adapter of `adapter_dir` merged in
  /// when not empty. Throws ClassifyError naming the file and tensor for an unsupported config
  /// (a token classifier too), a missing, misshapen or non-finite tensor.
  explicit DebertaModel(const std::string& dir, const std::string& adapter_dir = {},
                        const checkpoint::CheckpointProgress& progress = {},
                        const kernels::Compute& compute = kernels::default_compute());

  /// A task of several over one base: `encoder` shared with the others, `deltas` the task's
  /// LoRA updates of its layers (with its own projections of the relative positions), the
  /// pooler and classifier taken out of `head`. Throws as the other constructor for a head that
  /// does not fit.
  DebertaModel(DebertaConfig config, std::shared_ptr<const DebertaEncoder> encoder,
               EncoderDeltas deltas, checkpoint::CheckpointTensors& head,
               const kernels::Compute& compute);

  const DebertaConfig& config() const { return config_; }
  /// The encoder, to share with other tasks.
  const std::shared_ptr<const DebertaEncoder>& encoder() const { return encoder_; }
  /// A task's LoRA updates of the encoder's layers (empty: the encoder as it is).
  const EncoderDeltas& deltas() const { return deltas_; }
  std::size_t parameters() const;

  /// Row-major `inputs.size() × labels` logits; a batch gives every text exactly (bit for bit)
  /// its single-text result. Same input rules as DebertaEncoder::hidden_states().
  std::vector<float> logits(std::span<const BertInput> inputs, std::size_t threads) const;

 private:
  DebertaModel(DebertaCheckpoint checkpoint, const kernels::Compute& compute);

  DebertaConfig config_;
  std::shared_ptr<const DebertaEncoder> encoder_;
  EncoderDeltas deltas_;   ///< A task's updates; empty: the encoder as it is.
  kernels::Dense pooler_;  ///< pooler.dense, then pooler_hidden_act.
  kernels::Dense classifier_;
};

}  // namespace mcpclass::architectures
