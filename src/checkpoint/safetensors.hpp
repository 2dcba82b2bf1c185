// Internal: the safetensors weight format (https://huggingface.co/docs/safetensors): an 8-byte
// little-endian header length, a JSON header naming each tensor's dtype, shape and byte range,
// then the raw data. Learned models are stored in it so that inference needs no libtorch.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace mcpclass::checkpoint {

/// One tensor, always as float32 values (row-major).
struct SafeTensor {
  std::vector<std::int64_t> shape;
  std::vector<float> values;

  std::size_t elements() const;
};

struct SafeTensors {
  std::map<std::string, std::string> metadata;  ///< The header's `__metadata__`.
  std::map<std::string, SafeTensor> tensors;

  /// The named tensor with exactly this shape; throws ClassifyError naming `file` otherwise.
  const SafeTensor& require(const std::string& name, const std::vector<std::int64_t>& shape,
                            const std::string& file) const;
};

/// True when `path` starts like a safetensors file (a plausible header length then `{`).
bool looks_like_safetensors(const std::string& path);

/// Reads F32, F16 and BF16 tensors (the 16-bit ones widened to float). Throws ClassifyError naming
/// `path` and the problem for a missing, truncated or malformed file. `on_tensor`, when set, is
/// called with each tensor's stored bytes once it is read and converted.
SafeTensors read_safetensors(const std::string& path,
                             const std::function<void(std::uint64_t)>& on_tensor = {});

/// The bytes of a safetensors file holding every tensor as F32 (learned/safetensors_file.hpp writes
/// them). Throws ClassifyError for a tensor whose values do not fill its shape.
std::string safetensors_bytes(const SafeTensors& file);

}  // namespace mcpclass::checkpoint
