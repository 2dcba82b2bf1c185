#include "classify/keyword_matcher.hpp"

#include "util/config_reader.hpp"

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

// FNV-1a over the folded bytes, one byte at a time, so a word's prefixes hash on the way.
constexpr std::uint64_t kHashStart = 14695981039346656037ULL;
std::uint64_t hash_step(std::uint64_t h, char c) {
  return (h ^ fold(c)) * 1099511628211ULL;
}
std::uint64_t folded_hash(std::string_view s) {
  std::uint64_t h = kHashStart;
  for (const char c : s) h = hash_step(h, c);
  return h;
}

}  // namespace

void KeywordMatcher::WordTable::add(std::uint64_t hash, std::string_view word, std::size_t id) {
  if ((entries_.size() + 1) * 2 > slots_.size()) grow();
  std::size_t slot = slot_of(hash);
  for (; slots_[slot] != 0; slot = (slot + 1) & mask_) {
    auto& e = entries_[slots_[slot] - 1];
    if (e.hash == hash && e.word == word) {
      e.ids.push_back(id);
      return;
    }
  }
  entries_.push_back({hash, std::string(word), {id}});
  slots_[slot] = static_cast<std::uint32_t>(entries_.size());
}

void KeywordMatcher::WordTable::grow() {
  slots_.assign(std::max<std::size_t>(16, slots_.size() * 2), 0);
  mask_ = slots_.size() - 1;
  for (std::size_t i = 0; i < entries_.size(); ++i) {
    std::size_t slot = slot_of(entries_[i].hash);
    while (slots_[slot] != 0) slot = (slot + 1) & mask_;
    slots_[slot] = static_cast<std::uint32_t>(i + 1);
  }
}

const std::vector<std::size_t>* KeywordMatcher::WordTable::find(
    std::uint64_t hash, std::string_view word) const noexcept {
  if (slots_.empty()) return nullptr;
  for (std::size_t slot = slot_of(hash); slots_[slot] != 0; slot = (slot + 1) & mask_) {
    const auto& e = entries_[slots_[slot] - 1];
    if (e.hash == hash && equal_folded(e.word, word)) return &e.ids;
  }
  return nullptr;
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
      util::strict::fail("", "'*' is only allowed at the end of a keyword");
    // "foo *" has no word for the '*' to extend.
    if (star == 0 || !is_word_byte(static_cast<unsigned char>(keyword[star - 1])))
      util::strict::fail("", "'*' must directly follow a word");
    k.prefix = true;
    keyword = keyword.substr(0, star);
  }
  std::string lowered;
  for (const auto w : split_words(keyword, lowered)) k.words.emplace_back(w);
  if (k.words.empty()) util::strict::fail("", "keyword must not be empty");
  if (k.words.size() > kMaxWords)
    util::strict::fail("", "a keyword may have at most " + std::to_string(kMaxWords) + " words");
  // The limit is on the word the '*' extends, whatever words come before it.
  if (k.prefix && k.words.back().size() > kMaxPrefix)
    util::strict::fail("", "the word a '*' extends may have at most " + std::to_string(kMaxPrefix) +
                               " characters");

  const std::size_t id = keywords_.size();
  const std::string& last = k.words.back();
  if (k.prefix) prefix_lengths_ |= std::uint64_t{1} << last.size();
  (k.prefix ? by_last_prefix_ : by_last_word_).add(folded_hash(last), last, id);
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
    std::uint64_t h = kHashStart;
    for (std::size_t len = 1; len <= word.size(); ++len) {
      h = hash_step(h, word[len - 1]);
      if (len <= kMaxPrefix && (prefix_lengths_ >> len & 1U))
        if (const auto* ids = by_last_prefix_.find(h, word.substr(0, len))) hit(*ids);
    }
    if (const auto* ids = by_last_word_.find(h, word)) hit(*ids);
    newest = (newest + 1) % kMaxWords;
    previous[newest] = word;
    ++count;
  }
}

}  // namespace mcpclass::classify::detail
