// Internal: a BERT-family token classifier (BertForTokenClassification and the RoBERTa
// variants, as modeling_bert.py / modeling_roberta.py build them: the encoder without a pooler,
// then `classifier` over every token's final hidden state).
#pragma once

#include "architectures/bert/bert_encoder.hpp"
#include "architectures/common/token_head.hpp"

#include <cstddef>
#include <span>
#include <string>
#include <vector>

namespace mcpclass::architectures {

/// Thread-safety: immutable after construction; logits() may be called concurrently.
class BertTokenModel {
 public:
  /// Reads `dir`'s config.json and weights. Throws ClassifyError naming the file and tensor for
  /// an unsupported config (a sequence classifier too), a missing, misshapen or non-finite
  /// tensor.
  /// `adapter_dir`: a LoRA adapter merged in when not empty (as BertSequenceModel).
  explicit BertTokenModel(const std::string& dir, const std::string& adapter_dir = {},
                          const checkpoint::CheckpointProgress& progress = {},
                          const kernels::Compute& compute = kernels::default_compute());

  const BertConfig& config() const { return config_; }
  std::size_t parameters() const { return encoder_.parameters() + head_.parameters(); }

  /// Per text, its tokens × labels logits (row-major); a batch gives every text exactly its
  /// single-text result. Same input rules as BertEncoder::hidden_states().
  std::vector<std::vector<float>> logits(std::span<const BertInput> inputs,
                                         std::size_t threads) const {
    return head_.logits(encoder_.hidden_states(inputs, threads));
  }

 private:
  BertTokenModel(BertCheckpoint checkpoint, const kernels::Compute& compute);

  BertConfig config_;
  BertEncoder encoder_;
  TokenHead head_;
};

}  // namespace mcpclass::architectures
