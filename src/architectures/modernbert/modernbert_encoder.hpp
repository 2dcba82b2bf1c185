// Internal: the encoder of ModernBERT and mmBERT (ModernBertModel in transformers'
// modeling_modernbert.py, eval mode), computed natively: float32 weights from the checkpoint,
// oneDNN's sgemm for every product, no libtorch. Token embeddings, LayerNorm; per layer
// (pre-norm, no attn_norm in layer 0) self-attention with RoPE over the text's own tokens —
// global layers over all of them, the others over a sliding window of ±local_attention/2 — Wo,
// residual; mlp_norm, GeGLU (Wi's input half through hidden_activation times its gate half),
// Wo, residual; final_norm. Norms and products carry biases only where the config's *_bias
// flags say. The heads (modernbert_model.hpp, modernbert_token_model.hpp) read its hidden
// states. transformers' flash-attention path unpads the batch and pads the output again with
// zeros; here every text is computed on its own tokens only, which is what either path gives
// a text's real tokens.
#pragma once

#include "architectures/bert/bert_encoder.hpp"
#include "architectures/common/encoder_deltas.hpp"
#include "architectures/common/hidden_states.hpp"
#include "architectures/modernbert/modernbert_config.hpp"
#include "checkpoint/checkpoint_files.hpp"
#include "kernels/dense_rows.hpp"
#include "kernels/rope.hpp"

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace mcpclass::architectures {

/// A ModernBERT checkpoint directory's config.json (checked first) and tensors.
struct ModernBertCheckpoint {
  ModernBertConfig config;
  checkpoint::CheckpointTensors tensors;
};
/// read_modernbert_config(dir, head), then read_checkpoint_tensors(dir, adapter_dir, progress).
ModernBertCheckpoint read_modernbert_checkpoint(
    const std::string& dir, BertHead head, const std::string& adapter_dir = {},
    const checkpoint::CheckpointProgress& progress = {});

/// Throws ClassifyError naming the first tensor of `file` that no part of the model took: a bias
/// the config says the model lacks (or a tensor of another architecture) would otherwise be
/// silently ignored and the answers quietly wrong.
void require_every_tensor_taken(const checkpoint::CheckpointTensors& file,
                                const ModernBertConfig& c);

/// Thread-safety: immutable after construction; hidden_states() may be called concurrently.
class ModernBertEncoder {
 public:
  /// Takes the encoder's tensors (under config.prefix) out of `file`: config.layers of them, so a
  /// config cut short (2D Matryoshka) leaves the later layers' tensors in `file`. Throws
  /// ClassifyError naming the tensor and its file for a missing, misshapen or non-finite tensor.
  /// `compute`: the kernel set and the precision of the layers' products.
  ModernBertEncoder(const ModernBertConfig& config, checkpoint::CheckpointTensors& file,
                    const kernels::Compute& compute);

  /// Weights held (every tensor's elements).
  std::size_t parameters() const;

  /// The final hidden state (after final_norm when config.final_norm) of every token. Each text
  /// attends only to its own tokens and every product has one shape whatever the batch, so a batch
  /// gives every text exactly (bit for bit) its single-text result. Texts must be non-empty and at
  /// most config.max_tokens() long; throws ClassifyError for an id the model lacks. Token types are
  /// ignored (ModernBERT has none). `threads`: OpenMP threads of the products.
  /// `deltas`: a task's LoRA updates of the layers, added to their products (null: none).
  HiddenStates hidden_states(std::span<const BertInput> inputs, std::size_t threads,
                             const EncoderDeltas* deltas = nullptr) const;

  /// The layer, product and outputs of `module` (e.g. model.layers.3.attn.Wqkv), or nullopt for a
  /// module outside the layers' linear products.
  std::optional<ModuleSlot> locate(const std::string& module) const;
  /// Encoder layers.
  std::size_t layers() const { return layers_.size(); }

 private:
  struct Layer {
    kernels::Norm attention_norm;  ///< Empty in layer 0 (nn.Identity).
    kernels::Dense qkv, attention_out;
    kernels::Norm mlp_norm;
    kernels::Dense mlp_in,
        mlp_out;  ///< Wi: input and gate halves stacked, 2·intermediate × hidden.
    bool global = true;
  };

  void attention(const Layer& layer, std::vector<float>& qkv, std::span<const BertInput> inputs,
                 const std::vector<std::size_t>& first_row, std::vector<float>& context) const;

  kernels::Compute compute_;
  ModernBertConfig config_;
  kernels::RopeFrequencies global_rope_, local_rope_;
  std::vector<float> embeddings_;
  kernels::Norm embedding_norm_;
  std::vector<Layer> layers_;
  kernels::Norm final_norm_;
};

}  // namespace mcpclass::architectures
