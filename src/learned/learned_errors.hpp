// The errors of classify's contract under the names learned's code uses: a load or a forward
// pass that fails throws ClassifyError (mcpclass/classify/errors.hpp).
// Thread-safety: declarations only.
#pragma once

#include "mcpclass/classify/errors.hpp"

namespace mcpclass::learned {
using classify::ClassifyError;
}  // namespace mcpclass::learned
