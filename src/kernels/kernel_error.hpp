// Internal: what a kernel throws when the library under it fails (oneDNN). The layers above
// translate it into their own error (architectures/common/activations.hpp).
// Thread-safety: declarations only.
#pragma once

#include <stdexcept>

namespace mcpclass::kernels {

struct KernelError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace mcpclass::kernels
