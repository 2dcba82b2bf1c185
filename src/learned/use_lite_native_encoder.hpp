// Internal: USE-lite run directly on oneDNN, without libtorch (the encoder of the learned
// default). Reads the safetensors weights written by `mcpclass model convert`
// (use-lite.safetensors, metadata architecture = use-lite) and computes the same graph as the
// TorchScript encoder: linear layers as oneDNN matmuls (bfloat16 on CPUs with AVX-512 BF16,
// float32 otherwise), attention through oneDNN's sgemm, everything else in float32.
#pragma once

#include "mcpclass/learned/embedding_encoder.hpp"

#include <memory>
#include <string>

namespace mcpclass::learned::detail {

/// True when `path` holds native encoder weights (a safetensors file), not a TorchScript module.
bool is_native_encoder_file(const std::string& path);

/// Loads the native USE-lite encoder (options.precision applies). Throws ClassifyError naming the
/// file for missing, corrupt or mismatched weights.
/// Thread-safety: the returned encoder's const members may be called concurrently.
std::shared_ptr<const SentenceEncoder> load_native_use_lite(const EncoderOptions& options);

}  // namespace mcpclass::learned::detail
