// Internal: the config.json of a Gemma 3 text model (transformers' Gemma3TextConfig, model_type
// gemma3_text; google/embeddinggemma-300m) read as the base Gemma3TextModel, with
// configuration_gemma3.py's defaults: hidden_activation gelu_pytorch_tanh,
// query_pre_attn_scalar 256, sliding_window 4096 on the layers layer_types names (or, in older
// configs, every layer but each sliding_window_pattern-th), use_bidirectional_attention false
// (causal), RoPE of rope_theta 1e6 on full layers (rope_scaling applies to them alone) and
// rope_local_base_freq 1e4 on sliding ones, or the newer rope_parameters per layer type.
// Thread-safety: read_gemma3_config() shares no state.
#pragma once

#include "architectures/common/decoder_config.hpp"

#include <string>

namespace mcpclass::architectures {

/// Reads and checks `dir/config.json`. Throws ClassifyError naming the file and the key for
/// another model_type, a bad size, an unsupported activation or rope type, or
/// attn_logit_softcapping (Gemma 2's, which Gemma 3 does not use and this library does not
/// compute). final_logit_softcapping applies to the language-model head alone and is ignored.
DecoderConfig read_gemma3_config(const std::string& dir);

}  // namespace mcpclass::architectures
