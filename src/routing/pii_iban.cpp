// IBAN_CODE: read from each upper-case country code that starts a token and is followed by two
// check digits, for exactly the country's registered length (at most 34 characters on).
#include "mcpclass/routing/pii_recognizers.hpp"
#include "routing/pii_checksums.hpp"
#include "routing/pii_scanners.hpp"
#include "routing/pii_text.hpp"

#include <string>

namespace mcpclass::routing::detail {

namespace {

bool iban_char(char c) {
  return is_upper(c) || is_digit(c);
}

// The end of the IBAN of `length` characters starting at `begin`, written compact or in groups
// of four split by single spaces, with its characters appended to `compact`; `begin` if none.
std::size_t iban_end(std::string_view text, std::size_t begin, std::size_t length,
                     std::string& compact) {
  std::size_t p = begin;
  enum class Spacing { unknown, spaced, unspaced } spacing = Spacing::unknown;
  while (compact.size() < length) {
    if (p >= text.size()) return begin;
    const bool group_done = compact.size() % 4 == 0;
    if (group_done && spacing != Spacing::unspaced && text[p] == ' ' && p + 1 < text.size() &&
        iban_char(text[p + 1])) {
      spacing = Spacing::spaced;
      ++p;
    } else if (group_done && spacing == Spacing::spaced) {
      return begin;  // a group of four not followed by a space
    } else if (group_done && compact.size() == 4) {
      spacing = Spacing::unspaced;
    }
    if (!iban_char(text[p])) return begin;
    compact += text[p++];
  }
  return p;
}

}  // namespace

void scan_ibans(std::string_view text, std::vector<PiiMatch>& out) {
  std::string compact;
  for (std::size_t i = 0; i + 4 <= text.size(); ++i) {
    if (!is_upper(text[i]) || !is_upper(text[i + 1]) || !is_digit(text[i + 2]) ||
        !is_digit(text[i + 3]) || word_char_before(text, i)) {
      continue;
    }
    const std::size_t length = iban_length(text.substr(i, 2));
    if (length == 0) continue;
    compact.clear();
    const std::size_t end = iban_end(text, i, length, compact);
    if (end == i || word_char_at(text, end) || !iban_checksum_valid(compact)) continue;
    out.push_back(PiiMatch{std::string(pii_type::iban_code), i, end, 1.0});
    i = end - 1;
  }
}

}  // namespace mcpclass::routing::detail
