// Internal: a ModernBERT sequence classifier (ModernBertForSequenceClassification: ModernBERT,
// mmBERT) computed natively: float32 weights from the checkpoint, oneDNN's sgemm for every
// product, no libtorch. The graph is transformers' modeling_modernbert.py in eval mode: token
// embeddings, LayerNorm; per layer (pre-norm, no attn_norm in layer 0) self-attention with RoPE
// over the text's own tokens — global layers over all of them, the others over a sliding window
// of ±local_attention/2 — Wo, residual; mlp_norm, GeGLU (Wi's input half through
// hidden_activation times its gate half), Wo, residual; final_norm. The sequence head pools the
// first token or the mean of all tokens, then head.dense, classifier_activation, head.norm and
// the classifier. Norms and products carry biases only where the config's *_bias flags say.
#pragma once

#include "learned/bert_model.hpp"
#include "learned/dense_rows.hpp"
#include "learned/modernbert_config.hpp"
#include "learned/rope.hpp"

#include <cstddef>
#include <span>
#include <string>
#include <vector>

namespace mcpclass::learned::detail {

/// Final hidden states (after final_norm) of a batch: text b's token t is the row
/// first_row[b] + t of `width` values. Rows past a text's tokens (its padding) hold no token.
struct TokenStates {
  std::size_t width = 0;
  std::vector<std::size_t> first_row;
  std::vector<float> values;

  const float* token(std::size_t text, std::size_t t) const {
    return values.data() + (first_row[text] + t) * width;
  }
};

/// Thread-safety: immutable after construction; every method may be called concurrently.
class ModernBertModel {
 public:
  /// Reads `dir`'s config.json and weights (checkpoint_files.hpp). Throws ClassifyError naming
  /// the file and tensor for an unsupported config, a missing, misshapen or non-finite tensor,
  /// or a tensor the config does not account for (e.g. biases with *_bias false).
  explicit ModernBertModel(const std::string& dir, const std::string& adapter_dir = {},
                           const CheckpointProgress& progress = {});

  const ModernBertConfig& config() const { return config_; }

  /// Weights held (every tensor's elements).
  std::size_t parameters() const;

  /// The encoder's output for each text's tokens (the input of any head). Each text attends
  /// only to its own tokens and every product has one shape whatever the batch, so a batch
  /// gives every text exactly (bit for bit) its single-text result. Texts must be non-empty
  /// and at most config().max_tokens() long; throws ClassifyError for an id the model lacks.
  /// Token types are ignored (ModernBERT has none). `threads`: OpenMP threads of the products.
  TokenStates hidden_states(std::span<const BertInput> inputs, std::size_t threads) const;

  /// Row-major `inputs.size() × labels` logits of the sequence head, as hidden_states().
  std::vector<float> logits(std::span<const BertInput> inputs, std::size_t threads) const;

 private:
  struct Layer {
    Norm attention_norm;  ///< Empty in layer 0 (nn.Identity).
    Dense qkv, attention_out;
    Norm mlp_norm;
    Dense mlp_in, mlp_out;  ///< Wi: input and gate halves stacked, 2·intermediate × hidden.
    bool global = true;
  };

  void attention(const Layer& layer, std::vector<float>& qkv, std::span<const BertInput> inputs,
                 const std::vector<std::size_t>& first_row, std::vector<float>& context) const;

  ModernBertConfig config_;
  RopeFrequencies global_rope_, local_rope_;
  std::vector<float> embeddings_;
  Norm embedding_norm_;
  std::vector<Layer> layers_;
  Norm final_norm_;
  Dense head_dense_;
  Norm head_norm_;
  Dense classifier_;
};

}  // namespace mcpclass::learned::detail
