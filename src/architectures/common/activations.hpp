// Internal: the activation functions transformers' ACT2FN names in a config (hidden_act,
// hidden_activation, classifier_activation) that the native encoders compute.
#pragma once

#include "kernels/activate.hpp"

#include <boost/json/object.hpp>

#include <cstddef>
#include <string>

namespace mcpclass::architectures {

using kernels::HiddenActivation;

/// The activation `c[key]` names (default "gelu"): gelu (exact erf), gelu_new or
/// gelu_pytorch_tanh (tanh approximation), relu. Throws ClassifyError naming `file` and the key
/// for another name.
HiddenActivation config_activation(const boost::json::object& c, const std::string& file,
                                   const char* key);

/// What `a` computes, for `mcpclass model inspect`.
const char* activation_description(HiddenActivation a);

}  // namespace mcpclass::architectures
