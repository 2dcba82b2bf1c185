// CREDIT_CARD, US_SSN, PHONE_NUMBER: the text is cut into runs of digit groups joined by short
// separators ("+44 (0)20 7946 0958"), each read once. A run may hold several numbers split by
// spaces ("020 7946 0958 4111 1111 1111 1111"), so windows of at most kMaxGroups groups and
// kMaxDigits digits are tried from the run's start and after each number found, the longest
// match first: the work and memory per group are bounded, the scan linear.
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

// Reads the groups of a run one at a time, so that a run's groups are never all held: a run of
// a million groups costs the window it is matched in.
class RunReader {
 public:
  RunReader(std::string_view text, std::size_t first_digit) : text_(text), p_(first_digit) {}

  bool done() const { return done_; }
  /// The next group and the separator after it (empty where the run ends). Not after done().
  std::pair<DigitGroup, std::string_view> next() {
    const std::size_t begin = p_;
    while (p_ < text_.size() && is_digit(text_[p_])) ++p_;
    const DigitGroup group{begin, p_};
    std::size_t q = p_;
    while (q < text_.size() && q - p_ < kMaxSeparator && separator_char(text_[q])) ++q;
    if (q == p_ || q >= text_.size() || !is_digit(text_[q])) {
      done_ = true;
      end_ = p_;
      return {group, {}};
    }
    const std::string_view separator = text_.substr(p_, q - p_);
    p_ = q;
    return {group, separator};
  }
  /// Reads the rest of the run; where it ends.
  std::size_t skip_to_end() {
    while (!done_) next();
    return end_;
  }

 private:
  std::string_view text_;
  std::size_t p_;
  std::size_t end_ = 0;
  bool done_ = false;
};

std::optional<std::string_view> classify(const GroupedNumber& number) {
  if (is_credit_card(number)) return pii_type::credit_card;
  if (is_us_ssn(number)) return pii_type::us_ssn;
  if (is_phone_number(number)) return pii_type::phone_number;
  return std::nullopt;
}

// The groups from where the next number may start, at most kMaxGroups of them, and the
// separator after each; kept across runs so that a text of many short runs allocates once.
struct Window {
  std::vector<DigitGroup> groups;
  std::vector<std::string_view> after;
  GroupedNumber number;
};

// Matches the run that starts at `i` (a digit, or a '+' or '(' before one); where it ends.
std::size_t scan_run(std::string_view text, std::size_t i, Window& window,
                     std::vector<PiiMatch>& out) {
  std::size_t p = i;
  bool plus = text[p] == '+';
  if (plus) ++p;
  bool paren = text[p] == '(';
  if (paren) ++p;
  RunReader reader(text, p);
  auto& groups = window.groups;  // not a structured binding: clang 14 cannot capture one
  auto& after = window.after;
  auto& number = window.number;
  groups.clear();
  after.clear();
  const auto fill = [&] {
    while (groups.size() < kMaxGroups && !reader.done()) {
      const auto [group, separator] = reader.next();
      groups.push_back(group);
      after.push_back(separator);
    }
  };
  fill();
  std::size_t start = i;
  // A '(' that no ')' closes right after the first group is the prose's: "(4111 1111 ...)".
  if (paren && (after[0].empty() || after[0].front() != ')')) {
    paren = plus = false;
    start = groups[0].begin;
  }
  number.text = text;
  std::string_view before;  // the separator before groups[0]; empty at the run's start
  for (bool first = true;; first = false) {
    if (!first && !splits(before)) break;
    number.plus = first && plus;
    number.paren = first ? paren : before == " (";
    const std::size_t begin = first ? start : groups[0].begin - (number.paren ? 1 : 0);
    std::optional<std::pair<std::size_t, std::string_view>> best;  // last group, type
    std::size_t digits = 0;
    for (std::size_t j = 0; j < groups.size(); ++j) {
      digits += groups[j].end - groups[j].begin;
      if (digits > kMaxDigits) break;
      if (after[j].empty() ? !ends_token(text, groups[j].end) : !splits(after[j])) continue;
      number.groups = std::span(groups).first(j + 1);
      number.separators = std::span(after).first(j);
      number.digits.clear();
      for (std::size_t g = 0; g <= j; ++g) number.digits += number.group(g);
      if (const auto type = classify(number)) best.emplace(j, *type);
    }
    // Groups left over before a number are a part of something else ("5126 0933 9295 9544", a
    // card failing Luhn, holds no phone number "0933 9295 9544"), so no number starts after them.
    if (!best) break;
    const auto [last, type] = *best;
    out.push_back(PiiMatch{std::string(type), begin, groups[last].end, 1.0});
    before = after[last];
    if (before.empty()) return groups[last].end;
    groups.erase(groups.begin(), groups.begin() + static_cast<std::ptrdiff_t>(last + 1));
    after.erase(after.begin(), after.begin() + static_cast<std::ptrdiff_t>(last + 1));
    fill();
  }
  return reader.skip_to_end();
}

}  // namespace

void scan_digit_groups(std::string_view text, std::vector<PiiMatch>& out) {
  Window window;
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
    i = scan_run(text, i, window, out);
  }
}

}  // namespace mcpclass::routing::detail
