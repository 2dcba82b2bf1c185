#include "routing/pii_checksums.hpp"
#include "routing/pii_grouped_number.hpp"

#include <algorithm>

namespace mcpclass::routing::detail {

namespace {

bool one_separator(const GroupedNumber& n) {
  return std::all_of(n.separators.begin(), n.separators.end(),
                     [&](std::string_view s) { return s == n.separators.front(); });
}

}  // namespace

bool is_credit_card(const GroupedNumber& n) {
  const std::size_t count = n.digits.size();
  if (n.plus || n.paren || count < 13 || count > 19) return false;
  if (n.digits[0] < '2' || n.digits[0] > '6') return false;  // no issuer outside 2-6
  if (n.groups.size() > 1) {
    const std::string_view sep = n.separators.front();
    if (!one_separator(n) || (sep != " " && sep != "-") || n.group(0).size() != 4) return false;
    for (std::size_t k = 1; k < n.groups.size(); ++k) {
      if (n.group(k).size() < 3 || n.group(k).size() > 6) return false;
    }
  }
  return luhn_valid(n.digits);
}

bool is_us_ssn(const GroupedNumber& n) {
  if (n.plus || n.paren || n.groups.size() != 3 || !one_separator(n)) return false;
  const std::string_view sep = n.separators.front();
  if (sep != "-" && sep != " ") return false;
  const auto area = n.group(0), group = n.group(1), serial = n.group(2);
  return area.size() == 3 && group.size() == 2 && serial.size() == 4 &&
         ssn_issuable(area, group, serial);
}

}  // namespace mcpclass::routing::detail
