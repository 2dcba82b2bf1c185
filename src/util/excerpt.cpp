#include "util/excerpt.hpp"

#include "util/utf8.hpp"

#include <fmt/format.h>

namespace mcpclass::util {

std::string excerpt(std::string_view text, std::size_t max_bytes) {
  static constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD
  std::string out;
  std::size_t i = 0;
  while (i < text.size()) {
    const std::size_t len = util::utf8_character_length(text.substr(i));
    const std::string_view piece = len == 0 ? kReplacement : text.substr(i, len);
    if (out.size() + piece.size() > max_bytes) break;
    const auto c = static_cast<unsigned char>(piece[0]);
    if (len == 1 && (c < 0x20 || c == 0x7F))
      out += ' ';
    else
      out += piece;
    i += len == 0 ? 1 : len;
  }
  if (i < text.size()) out += fmt::format("… ({} bytes)", text.size());
  return out;
}

}  // namespace mcpclass::util
