#include "architectures/gemma3/gemma3_config.hpp"

#include "architectures/common/rope_config.hpp"
#include "checkpoint/checkpoint_config.hpp"

#include <boost/json.hpp>

#include <cmath>

namespace mcpclass::architectures {

namespace {

void read_ropes(const boost::json::object& c, DecoderConfig& d) {
  d.full_rope.theta = checkpoint::config_number(c, d.file, "rope_theta", 1.0, 1e12, 1'000'000.0);
  d.sliding_rope.theta =
      checkpoint::config_number(c, d.file, "rope_local_base_freq", 1.0, 1e12, 10'000.0);
  if (read_layer_type_ropes(c, d.file, d.max_positions, d.full_rope, d.sliding_rope)) return;
  // modeling_gemma3's local rotary embedding is the default RoPE of rope_local_base_freq: the
  // legacy rope_scaling scales the global layers' alone.
  if (const auto* scaling = config_object(c, d.file, "rope_scaling"))
    d.full_rope = read_rope(*scaling, d.file, "rope_scaling", d.full_rope, d.max_positions);
}

}  // namespace

DecoderConfig read_gemma3_config(const std::string& dir) {
  const auto c = checkpoint::read_checkpoint_config(dir);
  auto d = read_decoder_common(
      c, dir,
      {DecoderFamily::gemma3, "gemma3_text", "Gemma3TextModel", "a Gemma 3 text model", 131'072,
       256, "hidden_activation", HiddenActivation::gelu_tanh});
  const double scalar =
      checkpoint::config_number(c, d.file, "query_pre_attn_scalar", 0.0, 1e9, 256.0);
  d.attention_scale = static_cast<float>(std::pow(scalar, -0.5));
  if (const auto* cap = c.if_contains("attn_logit_softcapping"); cap != nullptr && !cap->is_null())
    checkpoint::config_error(d.file,
                             "attn_logit_softcapping is not supported (Gemma 3 has none: null)");
  d.bidirectional = checkpoint::config_flag(c, d.file, "use_bidirectional_attention", false);
  d.sliding_window = checkpoint::config_size(c, d.file, "sliding_window", 10'000'000, 4096);
  if (auto sliding = read_sliding_layers(c, d.file, d.layers)) {
    d.sliding_layer = std::move(*sliding);
  } else {
    const auto pattern = checkpoint::config_size(c, d.file, "sliding_window_pattern", 1'000, 6);
    for (std::size_t i = 0; i < d.layers; ++i) d.sliding_layer.push_back((i + 1) % pattern != 0);
  }
  read_ropes(c, d);
  return d;
}

}  // namespace mcpclass::architectures
