#include "tokenizers/hf/byte_level.hpp"

#include "tokenizers/hf/unicode.hpp"

namespace mcpclass::tokenizers::hf {

const std::array<std::string, 256>& byte_level_chars() {
  static const std::array<std::string, 256> table = [] {
    std::array<std::string, 256> t;
    char32_t next = 256;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE);
      append_utf8(t[static_cast<std::size_t>(b)], printable ? static_cast<char32_t>(b) : next++);
    }
    return t;
  }();
  return table;
}

}  // namespace mcpclass::tokenizers::hf
