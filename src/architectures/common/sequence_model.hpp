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

/// A task of open_task_models(): its name and its PEFT LoRA adapter directory.
struct TaskAdapter {
  std::string name;
  std::string adapter_dir;
};

/// Loads `dir` once and one model a task over it, in `tasks`' order: the base's encoder (its
/// embeddings, norms and packed products) held once and shared, each task's LoRA updates kept
/// apart and added to the products they adapt (kernels/low_rank.hpp: W x + s·B(A x)), each
/// task's head its own (the base's, with the tensors its adapter saves whole, e.g. a new
/// `classifier`; its labels from the adapter directory's config.json when it has one). BERT,
/// RoBERTa, XLM-RoBERTa, ModernBERT / mmBERT and DeBERTa-v2/v3 (a task adapting the query or key
/// projection of a share_att_key model projects the relative positions its own way, once). Throws
/// ClassifyError naming the adapter file as merging does, and for what tasks sharing one encoder
/// cannot keep apart: an update of an embedding or of a module outside the layers' linear products,
/// or a tensor of the encoder saved whole (a LayerNorm in modules_to_save, trained biases): merge
/// such an adapter into its own copy (open_sequence_model). Throws for another architecture too.
std::vector<std::unique_ptr<SequenceModel>> open_task_models(
    const std::string& dir, const std::vector<TaskAdapter>& tasks,
    const checkpoint::CheckpointProgress& progress = {},
    const kernels::Compute& compute = kernels::default_compute());

}  // namespace mcpclass::architectures
