// Internal: a DeBERTa-v2/v3 token classifier (DebertaV2ForTokenClassification, e.g. a PII or
// NER model fine-tuned from deberta-v3): the encoder (deberta_encoder.hpp), then `classifier`
// over every token's final hidden state (token_head.hpp).
#pragma once

#include "architectures/common/token_head.hpp"
#include "architectures/deberta/deberta_encoder.hpp"

#include <cstddef>
#include <span>
#include <string>
#include <vector>

namespace mcpclass::architectures {

/// Thread-safety: immutable after construction; logits() may be called concurrently.
class DebertaTokenModel {
 public:
  /// As DebertaModel's, for a token classifier.
  explicit DebertaTokenModel(const std::string& dir, const std::string& adapter_dir = {},
                             const checkpoint::CheckpointProgress& progress = {},
                             const kernels::Compute& compute = kernels::default_compute());

  const DebertaConfig& config() const { return config_; }
  std::size_t parameters() const { return encoder_.parameters() + head_.parameters(); }

  /// Per text, its tokens × labels logits (row-major); a batch gives every text exactly its
  /// single-text result. Same input rules as DebertaEncoder::hidden_states().
  std::vector<std::vector<float>> logits(std::span<const BertInput> inputs,
                                         std::size_t threads) const {
    return head_.logits(encoder_.hidden_states(inputs, threads));
  }

 private:
  DebertaTokenModel(DebertaCheckpoint checkpoint, const kernels::Compute& compute);

  DebertaConfig config_;
  DebertaEncoder encoder_;
  TokenHead head_;
};

}  // namespace mcpclass::architectures
