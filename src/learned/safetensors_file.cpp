#include "learned/safetensors_file.hpp"

#include "mcpclass/learned/learned_settings.hpp"

namespace mcpclass::learned::detail {

std::string write_safetensors(const std::string& path, const checkpoint::SafeTensors& file) {
  const auto bytes = checkpoint::safetensors_bytes(file);
  write_file_atomically(path, bytes);
  return text_checksum(bytes);
}

}  // namespace mcpclass::learned::detail
