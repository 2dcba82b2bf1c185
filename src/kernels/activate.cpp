// The portable activation lanes (activate.hpp) and the dispatch to a kernel set's; the OpenMP
// team shares the values in blocks of whole vectors, so no split changes a value's lanes.
#include "kernels/activate.hpp"

#include <omp.h>

#include <cstdint>

namespace mcpclass::kernels {

namespace {

using namespace detail;

float lane(HiddenActivation a, float x) {
  switch (a) {
    case HiddenActivation::gelu:
      return gelu_lane(x);
    case HiddenActivation::gelu_tanh:
      return gelu_tanh_lane(x);
    case HiddenActivation::relu:
      break;
  }
  return relu_lane(x);
}

void activate_portable(HiddenActivation a, float* x, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) x[i] = lane(a, x[i]);
}

void gate_portable(HiddenActivation a, const float* in, const float* gate, std::size_t n,
                   float* out) {
  for (std::size_t i = 0; i < n; ++i) out[i] = lane(a, in[i]) * gate[i];
}

ActivationKernel kernel_for(KernelSet set) {
  if (set != KernelSet::portable) {
    if (const auto k = activation_avx2(); k.activate != nullptr) return k;
  }
  return {activate_portable, gate_portable};
}

}  // namespace

void activate(KernelSet set, HiddenActivation a, float* x, std::size_t count) {
  const auto kernel = kernel_for(set);
  // Blocks of 4096 values: a team's share never splits a vector, and a few blocks per thread.
  constexpr std::size_t kBlock = 4096;
  const auto blocks = static_cast<std::int64_t>((count + kBlock - 1) / kBlock);
#pragma omp parallel for schedule(static)
  for (std::int64_t b = 0; b < blocks; ++b) {
    const std::size_t first = static_cast<std::size_t>(b) * kBlock;
    kernel.activate(a, x + first, std::min(kBlock, count - first));
  }
}

void activate_columns(KernelSet set, HiddenActivation a, float* x, std::size_t rows, std::size_t ld,
                      std::size_t first, std::size_t last) {
  if (last <= first) return;
  const auto kernel = kernel_for(set);
  for (std::size_t r = 0; r < rows; ++r) kernel.activate(a, x + r * ld + first, last - first);
}

void gated_activate(KernelSet set, HiddenActivation a, const float* wide, std::size_t rows,
                    std::size_t m, float* gated) {
  const auto kernel = kernel_for(set);
  const auto count = static_cast<std::int64_t>(rows);
#pragma omp parallel for schedule(static)
  for (std::int64_t r = 0; r < count; ++r) {
    const float* row = wide + static_cast<std::size_t>(r) * 2 * m;
    kernel.gate(a, row, row + m, m, gated + static_cast<std::size_t>(r) * m);
  }
}

}  // namespace mcpclass::kernels
