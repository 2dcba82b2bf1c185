// Internal: the config.json of a Qwen3 model (transformers' Qwen3Config, model_type qwen3;
// Qwen/Qwen3-Embedding-0.6B, whose architectures say Qwen3ForCausalLM) read as the base
// Qwen3Model, with configuration_qwen3.py's defaults: hidden_act silu, causal attention,
// head_dim 128, RoPE of rope_theta (or rope_parameters) with rope_scaling on every layer, and
// sliding windows only with use_sliding_window, on the layers layer_types names (by default
// those from max_window_layers on). Thread-safety: read_qwen3_config() shares no state.
#pragma once

#include "architectures/common/decoder_config.hpp"

#include <string>

namespace mcpclass::architectures {

/// Reads and checks `dir/config.json`. Throws ClassifyError naming the file and the key for
/// another model_type, a bad size, an unsupported activation or rope type.
DecoderConfig read_qwen3_config(const std::string& dir);

}  // namespace mcpclass::architectures
