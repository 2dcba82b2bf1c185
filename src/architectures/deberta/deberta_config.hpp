// Internal: the config.json of a DeBERTa-v2 or -v3 sequence or token classifier
// (DebertaV2For{Sequence,Token}Classification, model_type deberta-v2) as `transformers` writes
// it, checked before any weight is read, with the defaults of configuration_deberta_v2.py and
// the getattr fallbacks of modeling_deberta_v2.py.
// Thread-safety: read_deberta_config() shares no state; the result is a plain value.
#pragma once

#include "architectures/bert/bert_config.hpp"
#include "architectures/common/activations.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace mcpclass::architectures {

struct DebertaConfig {
  std::string file;          ///< The config.json read, for messages.
  std::string architecture;  ///< DebertaV2For{Sequence,Token}Classification.
  BertHead head = BertHead::sequence;
  std::size_t vocab = 0, hidden = 0, layers = 0, heads = 0, intermediate = 0;
  std::size_t embedding = 0;  ///< embedding_size (embed_proj maps it to hidden when they differ)
  std::size_t max_positions = 0;
  std::size_t type_vocab = 0;  ///< 0: no token-type embeddings (DeBERTa-v3)
  float layer_norm_eps = 1e-7f;
  HiddenActivation activation = HiddenActivation::gelu;         ///< hidden_act
  HiddenActivation pooler_activation = HiddenActivation::gelu;  ///< pooler_hidden_act
  bool position_biased_input = true;  ///< absolute position embeddings added to the input
  bool relative_attention = false;
  /// position_buckets (> 0: log buckets, make_log_bucket_position) and max_relative_positions
  /// (resolved: max_position_embeddings when the config says < 1).
  std::int64_t position_buckets = -1;
  std::size_t max_relative_positions = 0;
  bool share_att_key = false;       ///< c2p / p2c project rel_embeddings by key_proj / query_proj
  bool c2p = false, p2c = false;    ///< pos_att_type
  bool rel_norm = false;            ///< norm_rel_ebd has layer_norm: LayerNorm of rel_embeddings
  std::vector<std::string> labels;  ///< Class-id order.

  std::size_t head_dim() const { return hidden / heads; }
  /// Tokens a text may have, special tokens included.
  std::size_t max_tokens() const { return max_positions; }
  /// att_span: relative distances reach ± span; rel_embeddings has 2·span rows.
  std::size_t span() const {
    return position_buckets > 0 ? static_cast<std::size_t>(position_buckets)
                                : max_relative_positions;
  }
  /// 1 + one for each of c2p and p2c: the scores are over sqrt(head_dim × scale_factor).
  std::size_t scale_factor() const { return 1 + (c2p ? 1 : 0) + (p2c ? 1 : 0); }
};

/// Reads and checks `dir/config.json`, whose architecture must have the `head` wanted. Throws
/// ClassifyError naming the file and the key for an unknown architecture or model_type, the
/// other head, a missing or out-of-range size, an unsupported activation, pos_att_type or
/// norm_rel_ebd, what this library does not compute (conv_kernel_size > 0, attention_head_size
/// other than hidden_size / num_attention_heads, pooler_hidden_size other than hidden_size), or
/// problem_type (sequence head).
DebertaConfig read_deberta_config(const std::string& dir, BertHead head = BertHead::sequence);

/// make_log_bucket_position of modeling_deberta_v2.py for one distance `relative` (query − key):
/// itself when |relative| ≤ bucket_size / 2 or without buckets, else a logarithmic bucket up to
/// max_position, computed in float32 as torch does.
std::int64_t relative_bucket(std::int64_t relative, std::int64_t bucket_size,
                             std::int64_t max_position);

}  // namespace mcpclass::architectures
