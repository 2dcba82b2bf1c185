#include "architectures/common/activations.hpp"

#include "checkpoint/checkpoint_config.hpp"

namespace mcpclass::architectures {

HiddenActivation config_activation(const boost::json::object& c, const std::string& file,
                                   const char* key) {
  const auto name = checkpoint::config_string(c, file, key, "gelu");
  if (name == "gelu") return HiddenActivation::gelu;
  if (name == "gelu_new" || name == "gelu_pytorch_tanh") return HiddenActivation::gelu_tanh;
  if (name == "relu") return HiddenActivation::relu;
  if (name == "silu" || name == "swish") return HiddenActivation::silu;
  checkpoint::config_error(
      file, std::string(key) + " '" + name +
                "' is not supported (gelu, gelu_new, gelu_pytorch_tanh, relu, silu, swish)");
}

const char* activation_description(HiddenActivation a) {
  switch (a) {
    case HiddenActivation::gelu:
      return "exact GELU";
    case HiddenActivation::gelu_tanh:
      return "tanh GELU";
    case HiddenActivation::silu:
      return "SiLU";
    case HiddenActivation::relu:
      break;
  }
  return "ReLU";
}

}  // namespace mcpclass::architectures
