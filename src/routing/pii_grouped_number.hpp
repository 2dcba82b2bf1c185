// Internal: a number as people write it — digit groups split by separators ("(415) 555-2671",
// "4111 1111 1111 1111", "+44 (0)20 7946 0958") — and the rules that tell which PII type such a
// number is (pii_number_rules.cpp, pii_phone_rules.cpp).
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

namespace mcpclass::routing::detail {

struct DigitGroup {
  std::size_t begin = 0;  ///< byte offsets of the digits in the text
  std::size_t end = 0;
};

struct GroupedNumber {
  std::string_view text;
  bool plus = false;   ///< written after a '+'
  bool paren = false;  ///< the first group is written in parentheses: '(' before it
  std::span<const DigitGroup> groups;
  std::span<const std::string_view> separators;  ///< separators[k] between groups k and k+1
  std::string digits;                            ///< every digit, in order

  std::string_view group(std::size_t k) const {
    return text.substr(groups[k].begin, groups[k].end - groups[k].begin);
  }
};

/// 13-19 digits, bare or grouped 4-... with one kind of separator, first digit 2-6, Luhn.
bool is_credit_card(const GroupedNumber& n);
/// AAA-GG-SSSS (or spaces) that the SSA could have issued.
bool is_us_ssn(const GroupedNumber& n);
/// E.164, 00-prefixed, North American, or national with a trunk 0.
bool is_phone_number(const GroupedNumber& n);

}  // namespace mcpclass::routing::detail
