#include "kernels/rms_norm.hpp"

#include <cmath>
#include <cstdint>

namespace mcpclass::kernels {

void rms_norm(const std::vector<float>& weight, float eps, const float* x, std::size_t rows,
              std::size_t ld, std::size_t groups, float* out) {
  const std::size_t w = weight.size();
  const auto count = static_cast<std::int64_t>(rows);
#pragma omp parallel for schedule(static)
  for (std::int64_t r = 0; r < count; ++r)
    for (std::size_t g = 0; g < groups; ++g) {
      const std::size_t at = static_cast<std::size_t>(r) * ld + g * w;
      double squares = 0.0;
      for (std::size_t i = 0; i < w; ++i) squares += double{x[at + i]} * x[at + i];
      // torch: rsqrt(mean + eps) in float32, then (x · r) · weight.
      const float mean = static_cast<float>(squares / static_cast<double>(w));
      const float scale = 1.0f / std::sqrt(mean + eps);
      for (std::size_t i = 0; i < w; ++i) out[at + i] = (x[at + i] * scale) * weight[i];
    }
}

}  // namespace mcpclass::kernels
