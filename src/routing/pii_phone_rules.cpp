// PHONE_NUMBER: the shapes phone numbers are written in. A number without '+' or "00" must have
// a national shape (North American 3-3-4, or a trunk 0 and groups), because bare digit runs are
// order numbers and ids far more often than phones.
#include "routing/pii_grouped_number.hpp"

#include <string>

namespace mcpclass::routing::detail {

namespace {

constexpr std::size_t kMinInternational = 8;  // E.164 digits after '+', without a (0) trunk
constexpr std::size_t kMaxInternational = 15;

// Each '(' is closed by a ')' before the next opens, and none is left open.
bool parentheses_balanced(const GroupedNumber& n) {
  bool open = n.paren;
  for (const std::string_view s : n.separators) {
    for (const char c : s) {
      if (c == '(') {
        if (open) return false;
        open = true;
      } else if (c == ')') {
        if (!open) return false;
        open = false;
      }
    }
  }
  return !open;
}

// "+44 (0)20 ...": the trunk 0 that is dialled only from inside the country.
bool is_bracketed_trunk(const GroupedNumber& n, std::size_t k) {
  return n.group(k) == "0" && k > 0 && k + 1 < n.groups.size() &&
         n.separators[k - 1].back() == '(' && n.separators[k].front() == ')';
}

// The digits after the international prefix (`prefix` digits: 0 after '+', 2 for "00") form a
// number of E.164's length with a country code.
bool international(const GroupedNumber& n, std::size_t prefix) {
  std::string d;
  for (std::size_t k = 0; k < n.groups.size(); ++k) {
    if (!is_bracketed_trunk(n, k)) d += n.group(k);
  }
  if (d.size() < prefix) return false;
  d.erase(0, prefix);
  if (d.size() < kMinInternational || d.size() > kMaxInternational || d[0] == '0') return false;
  if (d[0] == '1') return d.size() == 11 && d[1] >= '2';  // NANP: +1, area code 2-9
  if (d[0] == '7') return d.size() == 11;                 // Russia, Kazakhstan
  return true;
}

bool plain_separator(std::string_view s) {
  return s == "-" || s == "." || s == " ";
}

// [1 ](415) 555-2671, [1-]415-555-2671, 415.555.2671, 415 555 2671.
bool north_american(const GroupedNumber& n) {
  std::size_t k = 0;
  if (n.groups.size() == 4 && n.group(0) == "1" && !n.paren) {
    if (!plain_separator(n.separators[0]) && n.separators[0] != " (") return false;
    k = 1;
  }
  if (n.groups.size() - k != 3) return false;
  const auto area = n.group(k);
  if (area.size() != 3 || n.group(k + 1).size() != 3 || n.group(k + 2).size() != 4) return false;
  if (area[0] < '2') return false;
  const bool area_in_parentheses = k == 0 ? n.paren : n.separators[0] == " (";
  const std::string_view first = n.separators[k], second = n.separators[k + 1];
  if (!plain_separator(second)) return false;
  if (area_in_parentheses) return first == ")" || first == ") " || first == ")-";
  if (!plain_separator(first)) return false;
  if (k == 1 && n.separators[0] != first) return false;
  return first == second || (first == " " && second == "-");
}

// Groups after the first of which pairs come only at the end, two or more of them: "01 23 45 67
// 89", "02 123 45 67", "044 668 18 00" (a single pair is an SSN's or a date's shape).
bool national_groups(const GroupedNumber& n) {
  std::size_t pairs_from = n.groups.size();
  for (std::size_t k = 1; k < n.groups.size(); ++k) {
    const std::size_t size = n.group(k).size();
    if (size < 2 || size > 8) return false;
    if (size == 2 && pairs_from == n.groups.size()) pairs_from = k;
    if (size != 2 && pairs_from != n.groups.size()) return false;
  }
  return n.groups.size() - pairs_from != 1;
}

// A national number dialled with a trunk 0 (UK, Germany, France, Japan, Australia, ...), in
// groups: 020 7946 0958, (030) 123456, 030/123456, 01 23 45 67 89, 03-1234-5678.
bool national_with_trunk(const GroupedNumber& n) {
  const std::string& d = n.digits;
  if (d.size() < 9 || d.size() > 12 || d[0] != '0' || d[1] == '0') return false;
  if (n.groups.size() < 2 || n.group(0).size() < 2 || n.group(0).size() > 5) return false;
  bool dots = false, others = false;
  for (std::size_t k = 0; k < n.separators.size(); ++k) {
    const std::string_view s = n.separators[k];
    if (k == 0 && n.paren) {
      if (s != ")" && s != ") ") return false;
    } else if (s == ".") {
      dots = true;
    } else if (s == " " || s == "-" || s == "/") {
      others = true;
    } else {
      return false;
    }
  }
  return !(dots && others) && national_groups(n);
}

}  // namespace

bool is_phone_number(const GroupedNumber& n) {
  if (!parentheses_balanced(n)) return false;
  if (n.plus) return international(n, 0);
  if (n.digits.starts_with("00")) return n.groups.size() >= 2 && international(n, 2);
  return north_american(n) || national_with_trunk(n);
}

}  // namespace mcpclass::routing::detail
