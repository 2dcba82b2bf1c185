#include "architectures/qwen3/qwen3_config.hpp"

#include "architectures/common/rope_config.hpp"
#include "checkpoint/checkpoint_config.hpp"

#include <boost/json.hpp>

#include <cmath>

namespace mcpclass::architectures {

DecoderConfig read_qwen3_config(const std::string& dir) {
  const auto c = checkpoint::read_checkpoint_config(dir);
  auto d = read_decoder_common(c, dir,
                               {DecoderFamily::qwen3, "qwen3", "Qwen3Model", "a Qwen3 model",
                                32'768, 128, "hidden_act", HiddenActivation::silu});
  d.attention_scale = static_cast<float>(std::pow(static_cast<double>(d.head_dim), -0.5));
  d.bidirectional = false;  // Qwen3Attention is causal whatever the config says
  const bool sliding = checkpoint::config_flag(c, d.file, "use_sliding_window", false);
  const auto window = checkpoint::config_size(c, d.file, "sliding_window", 10'000'000, 4096);
  // Qwen3Config drops sliding_window without use_sliding_window: every layer then attends fully,
  // whatever layer_types says.
  d.sliding_window = sliding ? window : 0;
  if (auto types = read_sliding_layers(c, d.file, d.layers)) {
    d.sliding_layer = std::move(*types);
  } else {
    const auto first = checkpoint::config_size(c, d.file, "max_window_layers", 1'000'000, 28);
    for (std::size_t i = 0; i < d.layers; ++i) d.sliding_layer.push_back(sliding && i >= first);
  }
  kernels::RopeSettings rope;
  rope.theta = checkpoint::config_number(c, d.file, "rope_theta", 1.0, 1e12, 10'000.0);
  if (const auto* params = config_object(c, d.file, "rope_parameters"))
    rope = read_rope(*params, d.file, "rope_parameters", rope, d.max_positions);
  else if (const auto* scaling = config_object(c, d.file, "rope_scaling"))
    rope = read_rope(*scaling, d.file, "rope_scaling", rope, d.max_positions);
  d.full_rope = d.sliding_rope = rope;
  return d;
}

}  // namespace mcpclass::architectures
