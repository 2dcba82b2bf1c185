// Internal: the encoder of the BERT family (BertModel / RobertaModel without a pooler), computed
// natively: float32 weights from the checkpoint, oneDNN's sgemm for every product, no libtorch.
// The graph is transformers' modeling_bert.py / modeling_roberta.py in eval mode: word + position
// + token-type embeddings, LayerNorm; per layer self-attention over the text's own tokens, dense,
// residual, LayerNorm (post-norm), intermediate dense with hidden_act, dense, residual,
// LayerNorm. The heads (bert_model.hpp, token_head.hpp) read its hidden states.
#pragma once

#include "architectures/bert/bert_config.hpp"
#include "architectures/common/encoder_rows.hpp"
#include "architectures/common/hidden_states.hpp"
#include "checkpoint/checkpoint_files.hpp"
#include "kernels/dense_rows.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace mcpclass::architectures {

/// One text's tokens: ids and token types (empty = all type 0).
struct BertInput {
  std::span<const std::int32_t> ids;
  std::span<const std::uint32_t> type_ids;
};

/// A checkpoint directory's config.json (checked first) and tensors.
struct BertCheckpoint {
  BertConfig config;
  checkpoint::CheckpointTensors tensors;
};
/// read_bert_config(dir, head), then read_checkpoint_tensors(dir, adapter_dir, progress): the
/// LoRA adapter of `adapter_dir` merged in when it is not empty.
BertCheckpoint read_bert_checkpoint(const std::string& dir, BertHead head,
                                    const std::string& adapter_dir = {},
                                    const checkpoint::CheckpointProgress& progress = {});

/// Thread-safety: immutable after construction; hidden_states() may be called concurrently.
class BertEncoder {
 public:
  /// Takes the encoder's tensors (under config.prefix) out of `file`. Throws ClassifyError
  /// naming the tensor and its file for a missing, misshapen or non-finite tensor.
  /// `compute`: the kernel set and the precision of the layers' products.
  BertEncoder(const BertConfig& config, checkpoint::CheckpointTensors& file,
              const kernels::Compute& compute);

  /// Weights held (every tensor's elements).
  std::size_t parameters() const;

  /// The final hidden state of every token. Each text attends only to its own tokens, starts at
  /// a multiple of kRowBlock rows and every product has one shape whatever the batch, so a
  /// batch gives every text exactly (bit for bit) its single-text result. Texts must be
  /// non-empty and at most config.max_tokens() long; throws ClassifyError for an id or token
  /// type the model lacks. `threads`: OpenMP threads of this call's products.
  /// `deltas`: a task's LoRA updates of the layers, added to their products (null: none).
  HiddenStates hidden_states(std::span<const BertInput> inputs, std::size_t threads,
                             const EncoderDeltas* deltas = nullptr) const;

  /// The layer, product and outputs of `module` (its name in the checkpoint, e.g.
  /// bert.encoder.layer.3.attention.self.value), or nullopt for a module outside the layers'
  /// linear products (embeddings, norms, the head).
  std::optional<ModuleSlot> locate(const std::string& module) const;
  /// Encoder layers.
  std::size_t layers() const { return layers_.size(); }

 private:
  using Layer = PostNormLayer;

  void layer_norm(const kernels::Norm& n, float* x, std::size_t rows) const {
    kernels::layer_norm(compute_.kernels, n, config_.layer_norm_eps, x, rows);
  }
  std::vector<float> embed(std::span<const BertInput> inputs, std::size_t rows) const;
  void attention(const std::vector<float>& qkv, std::span<const BertInput> inputs,
                 std::vector<float>& context) const;

  kernels::Compute compute_;
  BertConfig config_;
  std::vector<float> word_, position_, token_type_;
  kernels::Norm embedding_norm_;
  std::vector<Layer> layers_;
};

}  // namespace mcpclass::architectures
