// Internal: how the PII scanners read bytes: ASCII classes, and what counts as a letter of a word
// next to a candidate, so that a match never starts or ends inside a longer word.
#pragma once

#include <cstddef>
#include <string_view>

namespace mcpclass::routing::detail {

inline bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
inline bool is_upper(char c) {
  return c >= 'A' && c <= 'Z';
}
inline bool is_ascii_alpha(char c) {
  return is_upper(c) || (c >= 'a' && c <= 'z');
}
inline bool is_ascii_alnum(char c) {
  return is_digit(c) || is_ascii_alpha(c);
}
inline bool is_hex(char c) {
  return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/// The length in bytes (2) of a letter of an alphabetic script encoded at `pos` — Latin-1 and
/// Latin Extended, IPA, combining marks, Greek, Cyrillic (U+00C0-U+052F without × and ÷) — or 0.
/// Scripts without spaces between words (CJK) and punctuation are not letters here: they end a
/// word.
std::size_t letter_at(std::string_view text, std::size_t pos);
/// The same for the letter that ends just before `pos`.
std::size_t letter_before(std::string_view text, std::size_t pos);

/// A character of a word: an ASCII letter or digit, '_', or a letter as above.
bool word_char_at(std::string_view text, std::size_t pos);
bool word_char_before(std::string_view text, std::size_t pos);

}  // namespace mcpclass::routing::detail
