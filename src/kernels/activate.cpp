// The portable activation lanes (activate.hpp) and the dispatch to a kernel set's.
#include "kernels/activate.hpp"

#include <omp.h>

#include <cstdint>

namespace mcpclass::kernels {

namespace {

using namespace detail;

void activate_portable(HiddenActivation a, float* x, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) x[i] = activation_lane(a, x[i]);
}

void gate_portable(HiddenActivation a, const float* in, const float* gate, std::size_t n,
                   float* out) {
  for (std::size_t i = 0; i < n; ++i) out[i] = activation_lane(a, in[i]) * gate[i];
}

ActivationKernel kernel_for(KernelSet set) {
  if (set >= KernelSet::avx512) {
    if (const auto k = activation_avx512(); k.activate != nullptr) return k;
  }
  if (set != KernelSet::portable) {
    if (const auto k = activation_avx2(); k.activate != nullptr) return k;
  }
  return {activate_portable, gate_portable};
}

}  // namespace

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
