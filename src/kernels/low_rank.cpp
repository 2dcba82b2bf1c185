#include "kernels/low_rank.hpp"

#include <stdexcept>
#include <string>
#include <vector>

namespace mcpclass::kernels {

LowRank make_low_rank(std::span<const float> a, std::span<const float> b, std::size_t in,
                      std::size_t r, std::size_t width, std::size_t offset, double scale,
                      KernelSet set) {
  if (r == 0 || a.size() != r * in || b.size() != width * r)
    throw std::invalid_argument("a LoRA update of rank " + std::to_string(r) + " needs A of " +
                                std::to_string(r) + " × " + std::to_string(in) + " and B of " +
                                std::to_string(width) + " × " + std::to_string(r) + " values");
  const Compute f32{set, Precision::f32};
  return {make_dense(a, {}, in, r, f32), make_dense(b, {}, r, width, f32), offset,
          static_cast<float>(scale)};
}

void linear_adapted(const Dense& d, std::span<const LowRank> deltas, const float* x,
                    std::size_t rows, float* y, std::optional<HiddenActivation> activation) {
  if (deltas.empty()) return linear(d, x, rows, y, activation);
  linear(d, x, rows, y);
  std::vector<float> low, wide;
  for (const auto& delta : deltas) {
    if (delta.down.in != d.in || delta.offset + delta.up.out > d.out)
      throw std::invalid_argument("a LoRA update does not fit its " + std::to_string(d.in) + " → " +
                                  std::to_string(d.out) + " layer");
    low.resize(rows * delta.down.out);
    wide.resize(rows * delta.up.out);
    linear(delta.down, x, rows, low.data());
    linear(delta.up, low.data(), rows, wide.data());
    for (std::size_t i = 0; i < rows; ++i) {
      float* out = y + i * d.out + delta.offset;
      const float* add = wide.data() + i * delta.up.out;
      for (std::size_t j = 0; j < delta.up.out; ++j) out[j] += add[j] * delta.scale;
    }
  }
  if (activation) activate_columns(d.kernels, *activation, y, rows, d.out, 0, d.out);
}

}  // namespace mcpclass::kernels
