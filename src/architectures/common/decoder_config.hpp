// Internal: the config.json of a decoder-only text model used as an encoder (Gemma 3's
// Gemma3TextModel, model_type gemma3_text; Qwen3's Qwen3Model, model_type qwen3): what both
// families share — sizes with head_dim independent of hidden / heads, grouped-query attention,
// RMSNorm, RoPE per layer type, sliding windows per layer_types, causal or bidirectional
// attention — and the traits in which they differ. gemma3/gemma3_config.hpp and
// qwen3/qwen3_config.hpp fill it from each family's keys and defaults.
// Thread-safety: the readers share no state; the result is a plain value.
#pragma once

#include "architectures/common/activations.hpp"
#include "kernels/rope.hpp"

#include <boost/json/object.hpp>

#include <cstddef>
#include <string>
#include <vector>

namespace mcpclass::architectures {

enum class DecoderFamily { gemma3, qwen3 };

struct DecoderConfig {
  std::string file;          ///< The config.json read, for messages.
  std::string architecture;  ///< As reported: Gemma3TextModel or Qwen3Model (the base model).
  DecoderFamily family = DecoderFamily::qwen3;
  /// Tensor name prefix: "" for a base model saved on its own, "model" for one saved from a
  /// model with a head (found from the tensors at load).
  std::string prefix;
  std::size_t vocab = 0, hidden = 0, layers = 0, heads = 0, kv_heads = 0, head_dim = 0;
  std::size_t intermediate = 0, max_positions = 0;
  float norm_eps = 1e-6f;
  bool attention_bias = false;
  HiddenActivation activation = HiddenActivation::silu;
  float attention_scale = 1.0f;  ///< Gemma: query_pre_attn_scalar^-½; Qwen3: head_dim^-½.
  bool bidirectional = false;    ///< Every token sees every other (else causal).
  /// Tokens a sliding layer's query sees on each side it looks (0: no sliding layers): the
  /// config's sliding_window, whose distance is exclusive (|i − j| < sliding_window).
  std::size_t sliding_window = 0;
  std::vector<bool> sliding_layer;  ///< Per layer: sliding_attention, else full_attention.
  kernels::RopeSettings full_rope, sliding_rope;
  /// The final norm after the last layer computed: false when an encoder stopped early (2D
  /// Matryoshka) hands on transformers' hidden_states[N].
  bool final_norm = true;

  /// Gemma's traits: RMSNorm by (1 + weight), embeddings × √hidden, and a norm after attention
  /// and after the MLP besides the two before them.
  bool gemma() const { return family == DecoderFamily::gemma3; }
  std::size_t max_tokens() const { return max_positions; }
  /// Sliding windows as kernels::attention_head takes them: the distance a query may look.
  std::size_t window_of(std::size_t layer) const;
};

/// What a family's configuration class says a config.json lacks.
struct DecoderDefaults {
  DecoderFamily family;
  const char* model_type;    ///< e.g. "qwen3"
  const char* architecture;  ///< the base model's class, e.g. "Qwen3Model"
  const char* description;   ///< e.g. "a Qwen3 model", for messages
  std::size_t max_positions, head_dim;
  const char* activation_key;  ///< hidden_activation (Gemma) or hidden_act (Qwen3)
  HiddenActivation activation;
};

/// `dir`/config.json's model_type checked against the family's, and what both families read
/// alike (vocab_size, hidden_size, num_hidden_layers, num_attention_heads,
/// num_key_value_heads, head_dim, intermediate_size, max_position_embeddings, rms_norm_eps,
/// attention_bias, the activation), absent keys taking the family's defaults. Throws
/// ClassifyError naming the file and the key for another model_type, a missing or out-of-range
/// size, heads not a multiple of num_key_value_heads, an odd head_dim (RoPE rotates pairs) or
/// an unsupported activation.
DecoderConfig read_decoder_common(const boost::json::object& c, const std::string& dir,
                                  const DecoderDefaults& defaults);

/// The base model a config.json of either family describes: read_gemma3_config or
/// read_qwen3_config by model_type. True when `model_type` is one of theirs.
bool is_decoder_model_type(const std::string& model_type);
DecoderConfig read_decoder_config(const std::string& dir);

}  // namespace mcpclass::architectures
