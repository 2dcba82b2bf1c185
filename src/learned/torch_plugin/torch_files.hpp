// Internal: file helpers of the libtorch translation units.
#pragma once

#include <torch/script.h>

#include <string>

namespace mcpclass::learned::detail {

/// The whole file. Throws ClassifyError naming it.
std::string slurp(const std::string& path);

/// Saves `module` to `path` through a temporary file and a rename (a crash never leaves a torn
/// file); creates parent directories. Throws ClassifyError.
void save_module(torch::jit::Module& module, const std::string& path);

/// The float32 TorchScript USE-lite module for native weights (use-lite.safetensors), so that
/// export works from either encoder format. Throws ClassifyError.
torch::jit::Module use_lite_module(const std::string& safetensors_path);

}  // namespace mcpclass::learned::detail
