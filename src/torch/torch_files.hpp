// Internal: file helpers of the libtorch translation units.
#pragma once

#include <torch/script.h>

#include <string>

namespace mcpclass::classify::detail {

/// The whole file. Throws ClassifyError naming it.
std::string slurp(const std::string& path);

/// Saves `module` to `path` through a temporary file and a rename (a crash never leaves a torn
/// file); creates parent directories. Throws ClassifyError.
void save_module(torch::jit::Module& module, const std::string& path);

}  // namespace mcpclass::classify::detail
