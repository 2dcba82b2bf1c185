#include "torch/head_model.hpp"

#include <algorithm>
#include <cmath>

namespace mcpclass::classify::detail {

std::vector<double> HeadModel::probabilities(std::span<const float> x,
                                             double temperature_override) const {
  std::vector<double> h(x.begin(), x.end());
  for (std::size_t l = 0; l < layers.size(); ++l) {
    const auto& layer = layers[l];
    std::vector<double> y(layer.out);
    for (std::size_t o = 0; o < layer.out; ++o) {
      double s = layer.bias[o];
      const float* w = layer.weight.data() + o * layer.in;
      for (std::size_t i = 0; i < layer.in; ++i) s += static_cast<double>(w[i]) * h[i];
      y[o] = (l + 1 < layers.size()) ? std::max(0.0, s) : s;
    }
    h = std::move(y);
  }
  const double t = temperature_override > 0.0 ? temperature_override : temperature;
  const double mx = *std::max_element(h.begin(), h.end());
  double sum = 0.0;
  for (auto& v : h) sum += (v = std::exp((v - mx) / t));
  for (auto& v : h) v /= sum;
  return h;
}

}  // namespace mcpclass::classify::detail
