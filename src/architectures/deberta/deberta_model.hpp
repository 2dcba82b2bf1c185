// Internal: a DeBERTa-v2/v3 sequence classifier (DebertaV2ForSequenceClassification: the
// jailbreak and prompt-injection detectors fine-tuned from microsoft/deberta-v3-base, NLI
// models), as modeling_deberta_v2.py builds it: the encoder (deberta_encoder.hpp), then
// ContextPooler (the first token through pooler.dense and pooler_hidden_act) and the classifier.
#pragma once

#include "architectures/deberta/deberta_encoder.hpp"

#include <cstddef>
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

  const DebertaConfig& config() const { return config_; }
  std::size_t parameters() const;

  /// Row-major `inputs.size() × labels` logits; a batch gives every text exactly (bit for bit)
  /// its single-text result. Same input rules as DebertaEncoder::hidden_states().
  std::vector<float> logits(std::span<const BertInput> inputs, std::size_t threads) const;

 private:
  DebertaModel(DebertaCheckpoint checkpoint, const kernels::Compute& compute);

  DebertaConfig config_;
  DebertaEncoder encoder_;
  kernels::Dense pooler_;  ///< pooler.dense, then pooler_hidden_act.
  kernels::Dense classifier_;
};

}  // namespace mcpclass::architectures
