// Internal: the token-classification model of a Hugging Face checkpoint directory, whatever its
// architecture: config.json's `architectures` picks the native implementation (BERT family:
// bert_token_model.hpp; ModernBERT and mmBERT: modernbert_token_model.hpp), as sequence_model.hpp
// does for sequence heads.
#pragma once

#include "architectures/bert/bert_encoder.hpp"
#include "architectures/common/checkpoint_model.hpp"

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace mcpclass::architectures {

/// Thread-safety: immutable after construction; logits() may be called concurrently.
class TokenModel : public CheckpointModel {
 public:
  /// Per text, its tokens × labels logits (row-major); a batch gives every text exactly its
  /// single-text result (see the implementations).
  virtual std::vector<std::vector<float>> logits(std::span<const BertInput> inputs,
                                                 std::size_t threads) const = 0;
};

/// Loads `dir`, with the LoRA adapter of `adapter_dir` merged in when it is not empty. Throws
/// ClassifyError naming the file for an architecture no implementation supports (listing those
/// that are; a sequence classifier too), and as the implementations do for a bad checkpoint.
std::unique_ptr<TokenModel> open_token_model(
    const std::string& dir, const std::string& adapter_dir = {},
    const checkpoint::CheckpointProgress& progress = {},
    const kernels::Compute& compute = kernels::default_compute());

}  // namespace mcpclass::architectures
