// Internal: the config.json of a ModernBERT sequence or token classifier (ModernBERT, mmBERT) as
// `transformers` writes it, checked before any weight is read. Both layouts are read: the flat
// one of published checkpoints (global_attn_every_n_layers, global_rope_theta,
// local_rope_theta, rope_scaling) and the newer layer_types + rope_parameters.
// Thread-safety: read_modernbert_config() shares no state; the result is a plain value.
#pragma once

#include "architectures/bert/bert_config.hpp"
#include "architectures/common/activations.hpp"
#include "kernels/rope.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace mcpclass::architectures {

struct ModernBertConfig {
  std::string file;          ///< The config.json read, for messages.
  std::string architecture;  ///< ModernBertFor{Sequence,Token}Classification or ModernBertModel.
  BertHead head = BertHead::sequence;
  /// Tensor name prefix of the encoder: "model", or "" for a ModernBertModel saved on its own.
  std::string prefix = "model";
  std::size_t vocab = 0, hidden = 0, layers = 0, heads = 0, intermediate = 0;
  std::size_t max_positions = 0;
  float norm_eps = 1e-5f;
  bool norm_bias = false, attention_bias = false, mlp_bias = false, classifier_bias = false;
  HiddenActivation activation = HiddenActivation::gelu;             ///< hidden_activation
  HiddenActivation classifier_activation = HiddenActivation::gelu;  ///< of head.dense
  bool mean_pooling = false;          ///< classifier_pooling "mean", else "cls" (the first token).
  std::size_t local_attention = 128;  ///< A local layer's window: ±local_attention / 2.
  std::vector<bool> global_layer;     ///< Per layer: full attention, else sliding-window.
  /// final_norm after the last layer computed. An encoder stopped early (2D Matryoshka) hands
  /// on the raw residual stream, as transformers' hidden_states[N] does, unless the checkpoint's
  /// representation_contract says its intermediate exits were trained normalized.
  bool final_norm = true;
  bool final_norm_at_every_exit = false;  ///< representation_contract.intermediate_normalization
  kernels::RopeSettings global_rope, local_rope;
  std::vector<std::string> labels;  ///< Class-id order.

  std::size_t head_dim() const { return hidden / heads; }
  /// Tokens a text may have, special tokens included.
  std::size_t max_tokens() const { return max_positions; }
};

/// Reads and checks `dir/config.json`, whose architecture must have the `head` wanted (for
/// BertHead::none: any architecture of model_type modernbert, read as the base ModernBertModel,
/// as sentence-transformers' AutoModel does; its labels are not read). Throws
/// ClassifyError naming the file and the key for an unknown architecture or model_type, the
/// other head, a missing or out-of-range size, an unsupported activation, pooling, rope type or
/// problem_type (sequence head), or layer_types of the wrong length.
ModernBertConfig read_modernbert_config(const std::string& dir, BertHead head = BertHead::sequence);

}  // namespace mcpclass::architectures
