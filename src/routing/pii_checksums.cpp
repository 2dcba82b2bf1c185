#include "routing/pii_checksums.hpp"

#include "routing/pii_text.hpp"

#include <algorithm>
#include <iterator>
#include <utility>

namespace mcpclass::routing::detail {

namespace {

// The SWIFT IBAN registry's 89 countries (with Honduras, Nicaragua, Somalia and the other recent
// entries): country code and IBAN length, sorted by code.
constexpr std::pair<std::string_view, std::size_t> kIbanLengths[] = {
    {"AD", 24}, {"AE", 23}, {"AL", 28}, {"AT", 20}, {"AZ", 28}, {"BA", 20}, {"BE", 16}, {"BG", 22},
    {"BH", 22}, {"BI", 27}, {"BR", 29}, {"BY", 28}, {"CH", 21}, {"CR", 22}, {"CY", 28}, {"CZ", 24},
    {"DE", 22}, {"DJ", 27}, {"DK", 18}, {"DO", 28}, {"EE", 20}, {"EG", 29}, {"ES", 24}, {"FI", 18},
    {"FK", 18}, {"FO", 18}, {"FR", 27}, {"GB", 22}, {"GE", 22}, {"GI", 23}, {"GL", 18}, {"GR", 27},
    {"GT", 28}, {"HN", 28}, {"HR", 21}, {"HU", 28}, {"IE", 22}, {"IL", 23}, {"IQ", 23}, {"IS", 26},
    {"IT", 27}, {"JO", 30}, {"KW", 30}, {"KZ", 20}, {"LB", 28}, {"LC", 32}, {"LI", 21}, {"LT", 20},
    {"LU", 20}, {"LV", 21}, {"LY", 25}, {"MC", 27}, {"MD", 24}, {"ME", 22}, {"MK", 19}, {"MN", 20},
    {"MR", 27}, {"MT", 31}, {"MU", 30}, {"NI", 28}, {"NL", 18}, {"NO", 15}, {"OM", 23}, {"PK", 24},
    {"PL", 28}, {"PS", 29}, {"PT", 25}, {"QA", 29}, {"RO", 24}, {"RS", 22}, {"RU", 33}, {"SA", 24},
    {"SC", 31}, {"SD", 18}, {"SE", 24}, {"SI", 19}, {"SK", 24}, {"SM", 27}, {"SO", 23}, {"ST", 25},
    {"SV", 28}, {"TL", 23}, {"TN", 24}, {"TR", 26}, {"UA", 29}, {"VA", 22}, {"VG", 24}, {"XK", 20},
    {"YE", 30},
};
static_assert(std::is_sorted(std::begin(kIbanLengths), std::end(kIbanLengths)));
static_assert(std::size(kIbanLengths) == 89);

}  // namespace

bool luhn_valid(std::string_view digits) {
  unsigned sum = 0;
  bool twice = false;
  for (auto it = digits.rbegin(); it != digits.rend(); ++it) {
    unsigned d = static_cast<unsigned>(*it - '0');
    if (twice) d = d > 4 ? d * 2 - 9 : d * 2;
    sum += d;
    twice = !twice;
  }
  return !digits.empty() && sum % 10 == 0;
}

std::size_t iban_length(std::string_view country) {
  const auto* const end = std::end(kIbanLengths);
  const auto* const it =
      std::lower_bound(std::begin(kIbanLengths), end, country,
                       [](const auto& entry, std::string_view c) { return entry.first < c; });
  return it != end && it->first == country ? it->second : 0;
}

bool iban_checksum_valid(std::string_view iban) {
  if (iban.size() < 5 || !is_digit(iban[2]) || !is_digit(iban[3])) return false;
  const int check = (iban[2] - '0') * 10 + (iban[3] - '0');
  if (check < 2 || check > 98) return false;
  // The country code and check digits move to the end; letters count as 10 (A) to 35 (Z).
  unsigned remainder = 0;
  const auto add = [&remainder](char c) {
    if (is_digit(c)) {
      remainder = (remainder * 10 + static_cast<unsigned>(c - '0')) % 97;
    } else {
      remainder = (remainder * 100 + static_cast<unsigned>(c - 'A' + 10)) % 97;
    }
  };
  for (const char c : iban.substr(4)) add(c);
  for (const char c : iban.substr(0, 4)) add(c);
  return remainder == 1;
}

bool ssn_issuable(std::string_view area, std::string_view group, std::string_view serial) {
  if (area == "000" || area == "666" || area[0] == '9') return false;
  if (group == "00" || serial == "0000") return false;
  // Numbers the SSA voided after they were printed in advertising.
  const bool voided = (area == "078" && group == "05" && serial == "1120") ||
                      (area == "219" && group == "09" && serial == "9999");
  return !voided;
}

}  // namespace mcpclass::routing::detail
