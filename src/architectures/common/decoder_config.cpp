#include "architectures/common/decoder_config.hpp"

#include "architectures/gemma3/gemma3_config.hpp"
#include "architectures/qwen3/qwen3_config.hpp"
#include "checkpoint/checkpoint_config.hpp"

#include <boost/json.hpp>

#include <filesystem>
#include <limits>

namespace mcpclass::architectures {

std::size_t DecoderConfig::window_of(std::size_t layer) const {
  if (sliding_window == 0 || !sliding_layer[layer]) return std::numeric_limits<std::size_t>::max();
  return sliding_window - 1;
}

DecoderConfig read_decoder_common(const boost::json::object& c, const std::string& dir,
                                  const DecoderDefaults& defaults) {
  DecoderConfig d;
  d.file = (std::filesystem::path(dir) / "config.json").string();
  d.family = defaults.family;
  d.architecture = defaults.architecture;
  const auto& f = d.file;
  const auto type = checkpoint::config_string(c, f, "model_type", "");
  if (type != defaults.model_type)
    checkpoint::config_error(f, "model_type '" + type + "' is not " + defaults.description +
                                    " (expected '" + defaults.model_type + "')");
  d.vocab = checkpoint::config_size(c, f, "vocab_size", 10'000'000);
  d.hidden = checkpoint::config_size(c, f, "hidden_size", 65'536);
  d.layers = checkpoint::config_size(c, f, "num_hidden_layers", 1'000);
  d.heads = checkpoint::config_size(c, f, "num_attention_heads", 1'024);
  d.kv_heads = checkpoint::config_size(c, f, "num_key_value_heads", 1'024,
                                       static_cast<std::int64_t>(d.heads));
  d.head_dim = checkpoint::config_size(c, f, "head_dim", 4'096,
                                       static_cast<std::int64_t>(defaults.head_dim));
  d.intermediate = checkpoint::config_size(c, f, "intermediate_size", 1'000'000);
  d.max_positions = checkpoint::config_size(c, f, "max_position_embeddings", 10'000'000,
                                            static_cast<std::int64_t>(defaults.max_positions));
  d.norm_eps = static_cast<float>(checkpoint::config_number(c, f, "rms_norm_eps", 0.0, 1.0, 1e-6));
  d.attention_bias = checkpoint::config_flag(c, f, "attention_bias", false);
  d.activation = c.contains(defaults.activation_key)
                     ? config_activation(c, f, defaults.activation_key)
                     : defaults.activation;
  if (d.heads % d.kv_heads != 0)
    checkpoint::config_error(f, "num_attention_heads " + std::to_string(d.heads) +
                                    " is not a multiple of num_key_value_heads " +
                                    std::to_string(d.kv_heads));
  if (d.head_dim % 2 != 0)
    checkpoint::config_error(
        f, "head_dim " + std::to_string(d.head_dim) + " is odd (RoPE rotates pairs of dimensions)");
  return d;
}

bool is_decoder_model_type(const std::string& model_type) {
  return model_type == "gemma3_text" || model_type == "qwen3";
}

DecoderConfig read_decoder_config(const std::string& dir) {
  const auto c = checkpoint::read_checkpoint_config(dir);
  const auto file = (std::filesystem::path(dir) / "config.json").string();
  const auto type = checkpoint::config_string(c, file, "model_type", "");
  if (type == "gemma3_text") return read_gemma3_config(dir);
  if (type == "qwen3") return read_qwen3_config(dir);
  checkpoint::config_error(file, "model_type '" + type +
                                     "' is not a decoder this library computes (gemma3_text, "
                                     "qwen3)");
}

}  // namespace mcpclass::architectures
