// Internal: the activation functions transformers' ACT2FN names in a config (hidden_act,
// hidden_activation, classifier_activation) that the native encoders compute.
#pragma once

#include <boost/json/object.hpp>

#include <cstddef>
#include <string>

namespace mcpclass::learned::detail {

enum class HiddenActivation { gelu, gelu_tanh, relu };

/// The activation `c[key]` names (default "gelu"): gelu (exact erf), gelu_new or
/// gelu_pytorch_tanh (tanh approximation), relu. Throws ClassifyError naming `file` and the key
/// for another name.
HiddenActivation config_activation(const boost::json::object& c, const std::string& file,
                                   const char* key);

/// What `a` computes, for `mcpclass model inspect`.
const char* activation_description(HiddenActivation a);

/// Applies `a` to `count` values in place, the GELUs with oneDNN's vectorised eltwise kernel
/// (activate.cpp; the calling thread's OpenMP team shares the values). Each value's result
/// depends on that value alone. Throws ClassifyError if oneDNN fails. Thread-safety: pure.
void activate(HiddenActivation a, float* x, std::size_t count);

}  // namespace mcpclass::learned::detail
