#include "classify/keyword_matcher.hpp"

#include "classify/json_reader.hpp"

#include <algorithm>

namespace mcpclass::classify::detail {

namespace {

bool is_word_byte(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '+' || c == '#' || c >= 0x80;
}

}  // namespace

std::vector<std::string_view> split_words(std::string_view text, std::string& lowered) {
  lowered.assign(text);
  for (auto& c : lowered)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
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
  if (k.prefix && k.words.size() == 1 && k.words[0].size() > kMaxPrefix)
    fail("", "a prefix keyword may have at most " + std::to_string(kMaxPrefix) + " characters");

  const std::size_t id = keywords_.size();
  auto& index = (k.prefix && k.words.size() == 1) ? by_first_prefix_ : by_first_word_;
  index[k.words.front()].push_back(id);
  keywords_.push_back(std::move(k));
  return id;
}

bool KeywordMatcher::matches_at(const Keyword& k, const std::vector<std::string_view>& words,
                                std::size_t at) const {
  if (at + k.words.size() > words.size()) return false;
  for (std::size_t j = 0; j < k.words.size(); ++j) {
    const auto word = words[at + j];
    const bool last = j + 1 == k.words.size();
    if ((last && k.prefix) ? !word.starts_with(k.words[j]) : word != k.words[j]) return false;
  }
  return true;
}

std::vector<std::size_t> KeywordMatcher::match(std::string_view text) const {
  std::string lowered;
  const auto words = split_words(text, lowered);
  std::vector<bool> found(keywords_.size(), false);
  std::string key;
  for (std::size_t at = 0; at < words.size(); ++at) {
    const auto word = words[at];
    key.assign(word);
    if (const auto it = by_first_word_.find(key); it != by_first_word_.end())
      for (const auto id : it->second)
        if (!found[id] && matches_at(keywords_[id], words, at)) found[id] = true;
    const std::size_t longest = std::min(word.size(), kMaxPrefix);
    for (std::size_t len = 1; len <= longest; ++len) {
      key.assign(word.substr(0, len));
      if (const auto it = by_first_prefix_.find(key); it != by_first_prefix_.end())
        for (const auto id : it->second) found[id] = true;
    }
  }
  std::vector<std::size_t> ids;
  for (std::size_t id = 0; id < found.size(); ++id)
    if (found[id]) ids.push_back(id);
  return ids;
}

}  // namespace mcpclass::classify::detail
