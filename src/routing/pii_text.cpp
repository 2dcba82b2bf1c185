#include "routing/pii_text.hpp"

namespace mcpclass::routing::detail {

namespace {

bool is_letter_code_point(unsigned lead, unsigned continuation) {
  const unsigned cp = ((lead & 0x1Fu) << 6) | (continuation & 0x3Fu);
  return cp >= 0xC0 && cp <= 0x52F && cp != 0xD7 && cp != 0xF7;
}

bool is_lead_of_two(unsigned char c) {
  return c >= 0xC2 && c <= 0xDF;
}
bool is_continuation(unsigned char c) {
  return (c & 0xC0u) == 0x80u;
}

}  // namespace

std::size_t letter_at(std::string_view text, std::size_t pos) {
  if (pos + 1 >= text.size()) return 0;
  const auto lead = static_cast<unsigned char>(text[pos]);
  const auto next = static_cast<unsigned char>(text[pos + 1]);
  return is_lead_of_two(lead) && is_continuation(next) && is_letter_code_point(lead, next) ? 2 : 0;
}

std::size_t letter_before(std::string_view text, std::size_t pos) {
  return pos >= 2 && pos <= text.size() ? letter_at(text, pos - 2) : 0;
}

bool word_char_at(std::string_view text, std::size_t pos) {
  if (pos >= text.size()) return false;
  const char c = text[pos];
  return is_ascii_alnum(c) || c == '_' || letter_at(text, pos) != 0;
}

bool word_char_before(std::string_view text, std::size_t pos) {
  if (pos == 0 || pos > text.size()) return false;
  const char c = text[pos - 1];
  return is_ascii_alnum(c) || c == '_' || letter_before(text, pos) != 0;
}

}  // namespace mcpclass::routing::detail
