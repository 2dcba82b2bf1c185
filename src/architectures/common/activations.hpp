// Internal: the activation functions transformers' ACT2FN names in a config (hidden_act,
// hidden_activation, classifier_activation) that the native encoders compute.
#pragma once

#include "kernels/activate.hpp"
#include "kernels/kernel_error.hpp"
#include "mcpclass/classify/errors.hpp"

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

/// kernels::activate(a, x, count), a oneDNN failure thrown as ClassifyError (another name than
/// kernels::activate, which argument-dependent lookup also finds). Thread-safety: pure.
inline void apply_activation(HiddenActivation a, float* x, std::size_t count) {
  try {
    kernels::activate(a, x, count);
  } catch (const kernels::KernelError& e) {
    throw classify::ClassifyError(e.what());
  }
}

}  // namespace mcpclass::architectures
