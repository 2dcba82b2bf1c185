#include "classify/keyword_matcher.hpp"

#include "classify/json_reader.hpp"

#include <algorithm>

namespace mcpclass::classify::detail {

namespace {

bool is_word_byte(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '+' || c == '#' || c >= 0x80;
}

unsigned char fold(char c) {
  const auto u = static_cast<unsigned char>(c);
  return u >= 'A' && u <= 'Z' ? static_cast<unsigned char>(u - 'A' + 'a') : u;
}

bool equal_folded(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (fold(a[i]) != fold(b[i])) return false;
  return true;
}

}  // namespace

std::size_t KeywordMatcher::FoldedHash::operator()(std::string_view s) const noexcept {
  std::uint64_t h = 14695981039346656037ULL;  // FNV-1a over the folded bytes
  for (const char c : s) h = (h ^ fold(c)) * 1099511628211ULL;
  return static_cast<std::size_t>(h);
}

bool KeywordMatcher::FoldedEqual::operator()(std::string_view a,
                                             std::string_view b) const noexcept {
  return equal_folded(a, b);
}

std::vector<std::string_view> split_words(std::string_view text, std::string& lowered) {
  lowered.assign(text);
  for (auto& c : lowered) c = static_cast<char>(fold(c));
  std::vector<std::string_view> words;
  const std::string_view all(lowered);
  std::size_t i = 0;
  while (i < all.size()) {
    while (i < all.size() && !is_word_byte(static_cast<unsigned char>(all[i]))) ++i;
    const std::size_t start = i;
    while (i < all.size() && is_word_byte(static_cast<unsigned char>(all[i]))) ++i;
    if (i > start) words.push_back(all.substr(start, i - start));
  }
  return words;
}

std::size_t KeywordMatcher::add(std::string_view keyword) {
  Keyword k{{}, false};
  const auto star = keyword.find('*');
  if (star != std::string_view::npos) {
    if (keyword.find_first_not_of(" \t\r\n", star + 1) != std::string_view::npos)
      fail("", "'*' is only allowed at the end of a keyword");
    // "foo *" has no word for the '*' to extend.
    if (star == 0 || !is_word_byte(static_cast<unsigned char>(keyword[star - 1])))
      fail("", "'*' must directly follow a word");
    k.prefix = true;
    keyword = keyword.substr(0, star);
  }
  std::string lowered;
  for (const auto w : split_words(keyword, lowered)) k.words.emplace_back(w);
  if (k.words.empty()) fail("", "keyword must not be empty");
  if (k.words.size() > kMaxWords)
    fail("", "a keyword may have at most " + std::to_string(kMaxWords) + " words");
  if (k.prefix && k.words.size() == 1 && k.words[0].size() > kMaxPrefix)
    fail("", "a prefix keyword may have at most " + std::to_string(kMaxPrefix) + " characters");

  const std::size_t id = keywords_.size();
  if (k.prefix) longest_prefix_ = std::max(longest_prefix_, k.words.back().size());
  (k.prefix ? by_last_prefix_ : by_last_word_)[k.words.back()].push_back(id);
  keywords_.push_back(std::move(k));
  return id;
}

bool KeywordMatcher::preceded_by(const Keyword& k,
                                 const std::array<std::string_view, kMaxWords>& previous,
                                 std::size_t count, std::size_t newest) const {
  const std::size_t before = k.words.size() - 1;
  if (before > count) return false;
  for (std::size_t j = 0; j < before; ++j) {
    // k.words[before - 1 - j] must be the word j places before the current one.
    const std::size_t slot = (newest + kMaxWords - j) % kMaxWords;
    if (!equal_folded(previous[slot], k.words[before - 1 - j])) return false;
  }
  return true;
}

void KeywordMatcher::mark(std::string_view text, std::uint64_t* bits) const {
  std::array<std::string_view, kMaxWords> previous;  // ring of the words before the current one
  std::size_t count = 0;                             // words seen so far
  std::size_t newest = kMaxWords - 1;                // slot of the last word before the current
  const auto hit = [&](const std::vector<std::size_t>& ids) {
    for (const auto id : ids)
      if (!(bits[id / 64] >> (id % 64) & 1U) && preceded_by(keywords_[id], previous, count, newest))
        bits[id / 64] |= std::uint64_t{1} << (id % 64);
  };
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && !is_word_byte(static_cast<unsigned char>(text[i]))) ++i;
    const std::size_t start = i;
    while (i < text.size() && is_word_byte(static_cast<unsigned char>(text[i]))) ++i;
    if (i == start) break;
    const std::string_view word = text.substr(start, i - start);
    if (const auto it = by_last_word_.find(word); it != by_last_word_.end()) hit(it->second);
    const std::size_t longest = std::min(word.size(), longest_prefix_);
    for (std::size_t len = 1; len <= longest; ++len)
      if (const auto it = by_last_prefix_.find(word.substr(0, len)); it != by_last_prefix_.end())
        hit(it->second);
    newest = (newest + 1) % kMaxWords;
    previous[newest] = word;
    ++count;
  }
}

}  // namespace mcpclass::classify::detail
