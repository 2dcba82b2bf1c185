// CREDIT_CARD, US_SSN, PHONE_NUMBER: the text is cut into runs of digit groups joined by short
// separators ("+44 (0)20 7946 0958"), each read once. A run may hold several numbers split by
// spaces ("020 7946 0958 4111 1111 1111 1111"), so windows of at most kMaxGroups groups and
// kMaxDigits digits are tried from the run's start and after each number found, the longest
// match first: the work per group is bounded, the scan linear.
#include "mcpclass/routing/pii_recognizers.hpp"
#include "routing/pii_grouped_number.hpp"
#include "routing/pii_scanners.hpp"
#include "routing/pii_text.hpp"

#include <optional>
#include <string>
#include <utility>

namespace mcpclass::routing::detail {

namespace {

constexpr std::size_t kMaxSeparator = 3;  // ") ", " - ", " ("
constexpr std::size_t kMaxGroups = 8;     // "+33 1 23 45 67 89" has 6
constexpr std::size_t kMaxDigits = 20;    // 19 for a card, 17 for "00" + E.164

bool separator_char(char c) {
  return c == ' ' || c == '-' || c == '.' || c == '(' || c == ')' || c == '/';
}

// Punctuation that joins a number to a neighbouring token: "12-4111...", "v1.2", "4,111".
bool glue_char(char c) {
  return c == '-' || c == '.' || c == ',' || c == '/';
}

// A ',' joins digits only ("4,111"); after a word it separates fields ("DE,+49 ...").
bool glues(std::string_view text, std::size_t glue, std::size_t neighbour) {
  const char c = text[glue];
  return glue_char(c) && (c == ',' ? is_digit(text[neighbour]) : is_ascii_alnum(text[neighbour]));
}

bool starts_token(std::string_view text, std::size_t pos) {
  if (word_char_before(text, pos)) return false;
  if (pos > 0 && text[pos - 1] == '#') return false;  // "#0412-345-678": an issue or order id
  return !(pos >= 2 && is_digit(text[pos]) && glues(text, pos - 1, pos - 2));
}

bool ends_token(std::string_view text, std::size_t pos) {
  if (word_char_at(text, pos)) return false;
  return !(pos + 1 < text.size() && glues(text, pos, pos + 1));
}

// Where a run of groups may be split between two numbers.
bool splits(std::string_view separator) {
  return separator == " " || separator == " (";
}

struct DigitRun {
  std::size_t start = 0;  // with the '+' or '(' before the first group
  bool plus = false;
  bool paren = false;
  std::vector<DigitGroup> groups;
  std::vector<std::string_view> separators;
  std::size_t end = 0;
};

// Reads the run at `i` (a digit, or a '+' or '(' before one) into `run`.
void read_run(std::string_view text, std::size_t i, DigitRun& run) {
  run.start = i;
  run.groups.clear();
  run.separators.clear();
  std::size_t p = i;
  run.plus = text[p] == '+';
  if (run.plus) ++p;
  run.paren = text[p] == '(';
  if (run.paren) ++p;
  while (true) {
    const std::size_t begin = p;
    while (p < text.size() && is_digit(text[p])) ++p;
    run.groups.push_back(DigitGroup{begin, p});
    std::size_t q = p;
    while (q < text.size() && q - p < kMaxSeparator && separator_char(text[q])) ++q;
    if (q == p || q >= text.size() || !is_digit(text[q])) break;
    run.separators.push_back(text.substr(p, q - p));
    p = q;
  }
  run.end = p;
  // A '(' that no ')' closes right after the first group is the prose's: "(4111 1111 ...)".
  if (run.paren && (run.separators.empty() || run.separators[0].front() != ')')) {
    run.paren = false;
    run.start = run.groups[0].begin;
    run.plus = false;
  }
}

std::optional<std::string_view> classify(const GroupedNumber& number) {
  if (is_credit_card(number)) return pii_type::credit_card;
  if (is_us_ssn(number)) return pii_type::us_ssn;
  if (is_phone_number(number)) return pii_type::phone_number;
  return std::nullopt;
}

// The numbers in one run, appended to `out`.
void match_run(std::string_view text, const DigitRun& run, std::vector<PiiMatch>& out) {
  const std::size_t n = run.groups.size();
  const bool right_ok = ends_token(text, run.end);
  std::size_t k = 0;
  while (k < n) {
    if (k > 0 && !splits(run.separators[k - 1])) return;
    GroupedNumber number;
    number.text = text;
    number.plus = k == 0 && run.plus;
    number.paren = k == 0 ? run.paren : run.separators[k - 1] == " (";
    const std::size_t begin = k == 0 ? run.start : run.groups[k].begin - (number.paren ? 1 : 0);
    std::optional<std::pair<std::size_t, std::string_view>> best;  // last group, type
    std::size_t digits = 0;
    for (std::size_t j = k; j < n && j - k < kMaxGroups; ++j) {
      digits += run.groups[j].end - run.groups[j].begin;
      if (digits > kMaxDigits) break;
      if (j + 1 == n ? !right_ok : !splits(run.separators[j])) continue;
      number.groups = std::span(run.groups).subspan(k, j - k + 1);
      number.separators = std::span(run.separators).subspan(k, j - k);
      number.digits.clear();
      for (std::size_t g = k; g <= j; ++g) number.digits += number.group(g - k);
      if (const auto type = classify(number)) best.emplace(j, *type);
    }
    // Groups left over before a number are a part of something else ("5126 0933 9295 9544", a
    // card failing Luhn, holds no phone number "0933 9295 9544"), so no number starts after them.
    if (!best) return;
    out.push_back(PiiMatch{std::string(best->second), begin, run.groups[best->first].end, 1.0});
    k = best->first + 1;
  }
}

}  // namespace

void scan_digit_groups(std::string_view text, std::vector<PiiMatch>& out) {
  DigitRun run;
  std::size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    const bool opens = (c == '+' || c == '(') && i + 1 < text.size() &&
                       (is_digit(text[i + 1]) || (c == '+' && text[i + 1] == '(' &&
                                                  i + 2 < text.size() && is_digit(text[i + 2])));
    if (!(is_digit(c) || opens) || !starts_token(text, i)) {
      ++i;
      continue;
    }
    read_run(text, i, run);
    match_run(text, run, out);
    i = run.end;
  }
}

}  // namespace mcpclass::routing::detail
