// Internal: a ModernBERT token classifier (ModernBertForTokenClassification: ModernBERT, mmBERT,
// e.g. a PII detector), as modeling_modernbert.py builds it: the encoder
// (modernbert_encoder.hpp), then every token's final hidden state through the prediction head
// (head.dense, classifier_activation, head.norm) and `classifier` (token_head.hpp).
#pragma once

#include "architectures/common/token_head.hpp"
#include "architectures/modernbert/modernbert_encoder.hpp"

#include <cstddef>
#include <span>
#include <string>
#include <vector>

namespace mcpclass::architectures {

/// Thread-safety: immutable after construction; logits() may be called concurrently.
class ModernBertTokenModel {
 public:
  /// Reads `dir`'s config.json and weights, with the LoRA adapter of `adapter_dir` merged in
  /// when not empty. Throws ClassifyError naming the file and tensor for an unsupported config
  /// (a sequence classifier too), a missing, misshapen or non-finite tensor, or a tensor the
  /// config does not account for.
  explicit ModernBertTokenModel(const std::string& dir, const std::string& adapter_dir = {},
                                const checkpoint::CheckpointProgress& progress = {},
                                const kernels::Compute& compute = kernels::default_compute());

  const ModernBertConfig& config() const { return config_; }
  std::size_t parameters() const { return encoder_.parameters() + head_.parameters(); }

  /// Per text, its tokens × labels logits (row-major); a batch gives every text exactly its
  /// single-text result. Same input rules as ModernBertEncoder::hidden_states().
  std::vector<std::vector<float>> logits(std::span<const BertInput> inputs,
                                         std::size_t threads) const {
    return head_.logits(encoder_.hidden_states(inputs, threads));
  }

 private:
  ModernBertTokenModel(ModernBertCheckpoint checkpoint, const kernels::Compute& compute);

  ModernBertConfig config_;
  ModernBertEncoder encoder_;
  TokenHead head_;
};

}  // namespace mcpclass::architectures
