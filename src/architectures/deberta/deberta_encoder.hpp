// Internal: the encoder of DeBERTa-v2 and -v3 (DebertaV2Model in transformers'
// modeling_deberta_v2.py, eval mode), computed natively: word embeddings (+ absolute positions
// when position_biased_input, + token types when the config has them), embed_proj when
// embedding_size differs from hidden_size, LayerNorm; per layer disentangled self-attention
// (kernels/relative_attention.hpp) over the text's own tokens, dense, residual, LayerNorm
// (post-norm), intermediate dense with hidden_act, dense, residual, LayerNorm. The relative
// embeddings (LayerNorm'ed when norm_rel_ebd says so) are projected by each layer's key and
// query projections (or its pos_key_proj / pos_query_proj) once, at load, in float32. The heads
// (deberta_model.hpp, deberta_token_model.hpp) read its hidden states.
#pragma once

#include "architectures/bert/bert_encoder.hpp"
#include "architectures/common/encoder_deltas.hpp"
#include "architectures/common/encoder_rows.hpp"
#include "architectures/common/hidden_states.hpp"
#include "architectures/deberta/deberta_config.hpp"
#include "checkpoint/checkpoint_files.hpp"
#include "kernels/dense_rows.hpp"

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace mcpclass::architectures {

/// A DeBERTa checkpoint directory's config.json (checked first) and tensors.
struct DebertaCheckpoint {
  DebertaConfig config;
  checkpoint::CheckpointTensors tensors;
};
/// read_deberta_config(dir, head), then read_checkpoint_tensors(dir, adapter_dir, progress).
DebertaCheckpoint read_deberta_checkpoint(const std::string& dir, BertHead head,
                                          const std::string& adapter_dir = {},
                                          const checkpoint::CheckpointProgress& progress = {});

/// Thread-safety: immutable after construction; hidden_states() may be called concurrently.
class DebertaEncoder {
 public:
  /// Takes the encoder's tensors (deberta.*) out of `file`. Throws ClassifyError naming the
  /// tensor and its file for a missing, misshapen or non-finite tensor. `compute`: the kernel
  /// set and the precision of the layers' products.
  DebertaEncoder(const DebertaConfig& config, checkpoint::CheckpointTensors& file,
                 const kernels::Compute& compute);

  /// Weights held (every tensor's elements; the projected relative embeddings too).
  std::size_t parameters() const;

  /// The final hidden state of every token. Each text attends only to its own tokens and every
  /// product has one shape whatever the batch, so a batch gives every text exactly (bit for
  /// bit) its single-text result. Texts must be non-empty and at most config.max_tokens() long;
  /// throws ClassifyError for an id or token type the model lacks. `threads`: OpenMP threads.
  /// `deltas`: a task's LoRA updates of the layers (null: none; see locate()).
  HiddenStates hidden_states(std::span<const BertInput> inputs, std::size_t threads,
                             const EncoderDeltas* deltas = nullptr) const;

  /// Where a LoRA update of `module` goes (deberta.encoder.layer.N.attention.self.query_proj,
  /// key_proj, value_proj, attention.output.dense, intermediate.dense, output.dense), or nullopt
  /// for a module outside the layers' linear products (embeddings, pos_query_proj and
  /// pos_key_proj, norms, the head).
  std::optional<ModuleSlot> locate(const std::string& module) const;
  /// Encoder layers.
  std::size_t layers() const { return layers_.size(); }
  /// With share_att_key the relative embeddings go through each layer's query and key
  /// projections: a task adapting them gets its own projections of them in `deltas`.
  void project_positions(EncoderDeltas& deltas) const;

 private:
  struct Layer {
    PostNormLayer dense;  ///< qkv: query_proj, key_proj and value_proj stacked.
    /// The relative embeddings through the position key / query projections: 2·span rows of
    /// hidden values each (empty without c2p / p2c).
    std::vector<float> pos_key, pos_query;
  };

  std::vector<float> embed(std::span<const BertInput> inputs, std::size_t rows) const;
  void attention(const Layer& layer, const LayerDeltas* deltas, const std::vector<float>& qkv,
                 std::span<const BertInput> inputs, std::vector<float>& context) const;

  kernels::Compute compute_;
  DebertaConfig config_;
  std::vector<float> word_, position_, token_type_;
  kernels::Dense embed_proj_;  ///< Empty when embedding_size is hidden_size.
  kernels::Norm embedding_norm_;
  /// The (normalized) relative embeddings, kept for the tasks' projections (share_att_key with
  /// c2p or p2c only): 2·span × hidden.
  std::vector<float> relative_;
  std::vector<Layer> layers_;
};

}  // namespace mcpclass::architectures
