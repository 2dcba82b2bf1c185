// Internal: the activation functions the native encoders compute (their names in a config:
// architectures/common/activations.hpp).
#pragma once

#include <cstddef>

namespace mcpclass::kernels {

enum class HiddenActivation { gelu, gelu_tanh, relu };

/// Applies `a` to `count` values in place, the GELUs with oneDNN's vectorised eltwise kernel
/// (the calling thread's OpenMP team shares the values). Each value's result depends on that
/// value alone. Throws KernelError if oneDNN fails. Thread-safety: pure.
void activate(HiddenActivation a, float* x, std::size_t count);

}  // namespace mcpclass::kernels
