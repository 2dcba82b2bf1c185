#include "architectures/common/checkpoint_model.hpp"

#include <boost/json.hpp>

namespace mcpclass::architectures {

namespace json = boost::json;

namespace {

// What every encoder's description starts with.
template <class Config>
json::object sizes(const Config& c, std::size_t parameters, const char* family) {
  return {
      {"family", family},
      {"hidden_size", c.hidden},
      {"num_hidden_layers", c.layers},
      {"num_attention_heads", c.heads},
      {"intermediate_size", c.intermediate},
      {"vocab_size", c.vocab},
      {"max_tokens", c.max_tokens()},
      {"parameters", parameters},
  };
}

json::object describe_rope(const kernels::RopeSettings& r) {
  json::object o{{"theta", r.theta}};
  if (r.type == kernels::RopeSettings::Type::yarn) {
    o["type"] = "yarn";
    o["factor"] = r.factor;
    o["original_max_position_embeddings"] = r.original_max_positions;
  } else if (r.type == kernels::RopeSettings::Type::linear) {
    o["type"] = "linear";
    o["factor"] = r.factor;
  } else {
    o["type"] = "default";
  }
  return o;
}

// The linear layers run in the model's precision on its kernel set (the "precision" and
// "kernels" keys beside this text); attention stays float32 (oneDNN's sgemm) whatever the two.
constexpr const char* kComputeLead =
    "linear layers in the precision and kernel set below, attention in float32: ";

}  // namespace

json::object describe_bert(const BertConfig& c, std::size_t parameters, const std::string& head) {
  auto out = sizes(c, parameters, c.family == BertFamily::bert ? "bert" : "roberta");
  out["compute"] = std::string(kComputeLead) + "embeddings, " + std::to_string(c.layers) +
                   " post-norm encoder layers (self-attention, " +
                   activation_description(c.activation) + "), " + head;
  return out;
}

json::object describe_modernbert(const ModernBertConfig& c, std::size_t parameters,
                                 const std::string& head) {
  std::size_t global = 0;
  for (const bool g : c.global_layer) global += g ? 1 : 0;
  auto out = sizes(c, parameters, "modernbert");
  out["global_layers"] = global;
  out["local_attention"] = c.local_attention;
  out["global_rope"] = describe_rope(c.global_rope);
  out["local_rope"] = describe_rope(c.local_rope);
  out["compute"] = std::string(kComputeLead) + "embeddings and LayerNorm, " +
                   std::to_string(c.layers) + " pre-norm encoder layers (" +
                   std::to_string(global) +
                   " with global attention, the others a sliding window of ±" +
                   std::to_string(c.local_attention / 2) + " tokens; RoPE; GeGLU with " +
                   activation_description(c.activation) + "), " +
                   (c.final_norm ? "final LayerNorm, "
                                 : "no final LayerNorm (stopped early: transformers' "
                                   "hidden_states[" +
                                       std::to_string(c.layers) + "]), ") +
                   head;
  return out;
}

json::object describe_decoder(const DecoderConfig& c, std::size_t parameters,
                              const std::string& head) {
  std::size_t sliding = 0;
  for (const bool s : c.sliding_layer) sliding += s && c.sliding_window != 0 ? 1 : 0;
  auto out = sizes(c, parameters, c.gemma() ? "gemma3" : "qwen3");
  out["num_key_value_heads"] = c.kv_heads;
  out["head_dim"] = c.head_dim;
  out["attention"] = c.bidirectional ? "bidirectional" : "causal";
  out["sliding_layers"] = sliding;
  out["sliding_window"] = c.sliding_window;
  out["full_rope"] = describe_rope(c.full_rope);
  out["sliding_rope"] = describe_rope(c.sliding_rope);
  const std::string window = sliding == 0 ? "full attention on every layer"
                                          : std::to_string(sliding) +
                                                " of them within a sliding window of " +
                                                std::to_string(c.sliding_window) + " tokens";
  out["compute"] = std::string(kComputeLead) + "embeddings" + (c.gemma() ? " × √hidden_size" : "") +
                   ", " + std::to_string(c.layers) + " pre-norm decoder layers (" +
                   (c.bidirectional ? "bidirectional" : "causal") + " grouped-query attention, " +
                   std::to_string(c.heads) + " heads over " + std::to_string(c.kv_heads) +
                   " key/value heads of " + std::to_string(c.head_dim) + ", q/k RMSNorm, RoPE; " +
                   window + "; gated MLP with " + activation_description(c.activation) +
                   (c.gemma() ? "; RMSNorm by 1 + weight, 4 per layer" : "") + "), " +
                   (c.final_norm ? "final RMSNorm, "
                                 : "no final RMSNorm (stopped early: transformers' hidden_states[" +
                                       std::to_string(c.layers) + "]), ") +
                   head;
  return out;
}

json::object describe_deberta(const DebertaConfig& c, std::size_t parameters,
                              const std::string& head) {
  auto out = sizes(c, parameters, "deberta-v2");
  std::string relative = "no relative positions";
  if (c.relative_attention) {
    relative = std::string(c.c2p && c.p2c ? "c2p and p2c"
                           : c.c2p        ? "c2p"
                           : c.p2c        ? "p2c"
                                          : "no") +
               " relative-position scores over ±" + std::to_string(c.span()) +
               (c.position_buckets > 0 ? " log buckets" : " distances");
    out["position_buckets"] = c.position_buckets;
    out["max_relative_positions"] = c.max_relative_positions;
  }
  out["position_biased_input"] = c.position_biased_input;
  out["compute"] = std::string(kComputeLead) + "embeddings" +
                   (c.position_biased_input ? " with absolute positions" : "") + ", " +
                   std::to_string(c.layers) +
                   " post-norm encoder layers (disentangled attention: " + relative + "; " +
                   activation_description(c.activation) + "), " + head;
  return out;
}

}  // namespace mcpclass::architectures
