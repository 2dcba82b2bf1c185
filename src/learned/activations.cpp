#include "learned/activations.hpp"

#include "learned/checkpoint_config.hpp"

#include <algorithm>
#include <cmath>

namespace mcpclass::learned::detail {

HiddenActivation config_activation(const boost::json::object& c, const std::string& file,
                                   const char* key) {
  const auto name = config_string(c, file, key, "gelu");
  if (name == "gelu") return HiddenActivation::gelu;
  if (name == "gelu_new" || name == "gelu_pytorch_tanh") return HiddenActivation::gelu_tanh;
  if (name == "relu") return HiddenActivation::relu;
  config_error(file, std::string(key) + " '" + name +
                         "' is not supported (gelu, gelu_new, gelu_pytorch_tanh, relu)");
}

const char* activation_description(HiddenActivation a) {
  switch (a) {
    case HiddenActivation::gelu:
      return "exact GELU";
    case HiddenActivation::gelu_tanh:
      return "tanh GELU";
    case HiddenActivation::relu:
      break;
  }
  return "ReLU";
}

void activate(HiddenActivation a, float* x, std::size_t count) {
  switch (a) {
    case HiddenActivation::gelu:  // exact, as torch.nn.functional.gelu
      for (std::size_t i = 0; i < count; ++i)
        x[i] = 0.5f * x[i] * (1.0f + std::erf(x[i] * static_cast<float>(M_SQRT1_2)));
      break;
    case HiddenActivation::gelu_tanh: {
      const float k = std::sqrt(2.0f / static_cast<float>(M_PI));
      for (std::size_t i = 0; i < count; ++i)
        x[i] = 0.5f * x[i] * (1.0f + std::tanh(k * (x[i] + 0.044715f * x[i] * x[i] * x[i])));
      break;
    }
    case HiddenActivation::relu:
      for (std::size_t i = 0; i < count; ++i) x[i] = std::max(x[i], 0.0f);
      break;
  }
}

}  // namespace mcpclass::learned::detail
