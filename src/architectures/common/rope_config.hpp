// Internal: what a config.json says per layer type, shared by every family that mixes full and
// sliding-window layers with a RoPE each (ModernBERT, Gemma 3, Qwen3): layer_types, and a RoPE's
// settings (a rope_parameters entry or the legacy rope_scaling object, transformers'
// modeling_rope_utils.py). Thread-safety: pure functions.
#pragma once

#include "kernels/rope.hpp"

#include <boost/json/object.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace mcpclass::architectures {

/// `key` of `c` when it is an object, nullptr when absent or null; throws ClassifyError naming
/// `file` and `key` for any other value.
const boost::json::object* config_object(const boost::json::object& c, const std::string& file,
                                         const char* key);

/// One RoPE from `p` (`where` names it in messages, e.g. "rope_scaling") over `base`, whose
/// theta is already set (p's rope_theta, when present, overrides it). rope_type (or the older
/// `type`) default, linear or yarn; any other is refused by name.
kernels::RopeSettings read_rope(const boost::json::object& p, const std::string& file,
                                const std::string& where, kernels::RopeSettings base,
                                std::size_t max_positions);

/// The newer rope_parameters of a model with layer types: its full_attention and
/// sliding_attention entries over `full` and `sliding` (an absent entry keeps its base). False,
/// and both left as they are, when the config has no rope_parameters.
bool read_layer_type_ropes(const boost::json::object& c, const std::string& file,
                           std::size_t max_positions, kernels::RopeSettings& full,
                           kernels::RopeSettings& sliding);

/// layer_types, `layers` of them: per layer true for sliding_attention, false for
/// full_attention; nullopt when absent or null. Throws ClassifyError naming `file` for a list of
/// another length or another type.
std::optional<std::vector<bool>> read_sliding_layers(const boost::json::object& c,
                                                     const std::string& file, std::size_t layers);

}  // namespace mcpclass::architectures
