// Internal: the sequence-classification model of a Hugging Face checkpoint directory, whatever
// its architecture: config.json's `architectures` picks the native implementation (BERT family:
// bert_model.hpp; ModernBERT and mmBERT: modernbert_model.hpp).
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
class SequenceModel : public CheckpointModel {
 public:
  /// Row-major `inputs.size() × labels` logits; a batch gives every text exactly its
  /// single-text result (see the implementations).
  virtual std::vector<float> logits(std::span<const BertInput> inputs,
                                    std::size_t threads) const = 0;
};

/// Activation rows a text of `tokens` tokens takes in a batch of any SequenceModel.
std::size_t sequence_rows(std::size_t tokens);

/// Loads `dir`, with the LoRA adapter of `adapter_dir` merged in when it is not empty
/// (lora_adapter.hpp). Throws ClassifyError naming the file for an architecture no
/// implementation supports (listing those that are), and as the implementations do for a bad
/// checkpoint. `progress`: bytes of tensors read, as read_checkpoint_tensors reports it.
std::unique_ptr<SequenceModel> open_sequence_model(
    const std::string& dir, const std::string& adapter_dir = {},
    const checkpoint::CheckpointProgress& progress = {},
    const kernels::Compute& compute = kernels::default_compute());

}  // namespace mcpclass::architectures
