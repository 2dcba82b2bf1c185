// Internal: writing a safetensors file (checkpoint/safetensors.hpp has the format) the way the
// learned layer writes its files: atomically, with the checksum of what was written.
#pragma once

#include "checkpoint/safetensors.hpp"

#include <string>

namespace mcpclass::learned::detail {

/// Writes every tensor as F32, atomically (write_file_atomically), and returns the checksum of
/// the bytes written (text_checksum, equal to file_checksum of the file). Throws ClassifyError.
std::string write_safetensors(const std::string& path, const checkpoint::SafeTensors& file);

}  // namespace mcpclass::learned::detail
