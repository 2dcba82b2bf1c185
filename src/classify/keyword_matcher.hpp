// Internal: finds which of many keywords occur in a text, in one linear pass over its words. A
// hash index over words replaces per-keyword regexes, whose Unicode word-boundary classes made
// a few hundred keywords exceed any sensible RE2 memory budget.
//
// Words are maximal runs of ASCII letters, digits, '_', '+', '#' (so "C++" and "C#" are words)
// and non-ASCII bytes (so words in other scripts stay whole); everything else separates words.
// Case folding is ASCII-only. Keywords are split the same way, so "object-oriented" matches
// "object oriented" and "Object-Oriented".
//
// The text is neither copied nor lower-cased: words are views into it, and keywords are indexed
// by their last word so that only the few words before the current one are kept. One pass over a
// word's bytes computes the ASCII-case-insensitive hash of each of its prefixes, so a word costs
// one probe of the word table plus one probe per length some prefix keyword has (a hash map
// lookup per prefix length rehashed the prefix each time: a third of a rule classification). A
// match costs no allocation for up to kInlineKeywords keywords, whatever the text's length.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace mcpclass::classify::detail {

class KeywordMatcher {
 public:
  /// Adds a keyword; a trailing '*' makes its last word a prefix. Returns its id (sequential
  /// from 0). Throws ConfigError without a key path (the caller knows it) for an empty keyword,
  /// a misplaced '*', or more than kMaxWords words.
  std::size_t add(std::string_view keyword);
  std::size_t size() const noexcept { return keywords_.size(); }

  /// Calls `found(id)` once for each keyword in `text`, in ascending id order. Linear in the
  /// text's length; no allocation while size() <= kInlineKeywords.
  template <class F>
  void for_each_match(std::string_view text, F&& found) const {
    const std::size_t words = (keywords_.size() + 63) / 64;
    std::array<std::uint64_t, kInlineKeywords / 64> inline_bits;  // only `words` are used
    std::vector<std::uint64_t> heap_bits;
    std::uint64_t* bits = inline_bits.data();
    if (keywords_.size() > kInlineKeywords) {
      heap_bits.resize(words);
      bits = heap_bits.data();
    }
    std::fill_n(bits, words, 0);
    mark(text, bits);
    // Word by word, set bits only: testing each of hundreds of keyword bits was a sixth of a
    // rule classification.
    for (std::size_t w = 0; w < words; ++w)
      for (std::uint64_t b = bits[w]; b != 0; b &= b - 1) found(w * 64 + std::countr_zero(b));
  }

  static constexpr std::size_t kMaxWords = 16;
  static constexpr std::size_t kInlineKeywords = 4096;

 private:
  struct Keyword {
    std::vector<std::string> words;  // lower-case
    bool prefix;                     ///< The last word matches any word it begins.
  };
  /// Open addressing from a lower-case word (or prefix), by its folded hash, to the ids of the
  /// keywords it ends.
  class WordTable {
   public:
    void add(std::uint64_t hash, std::string_view word, std::size_t id);
    /// The ids for `word` (any case) whose folded hash is `hash`; nullptr when none.
    const std::vector<std::size_t>* find(std::uint64_t hash, std::string_view word) const noexcept;

   private:
    struct Entry {
      std::uint64_t hash;
      std::string word;
      std::vector<std::size_t> ids;
    };
    std::size_t slot_of(std::uint64_t hash) const noexcept { return (hash ^ hash >> 29) & mask_; }
    void grow();
    std::vector<Entry> entries_;
    std::vector<std::uint32_t> slots_;  // entry index + 1; 0 = empty
    std::size_t mask_ = 0;
  };

  // Prefixes ('*' words) longer than this are refused, bounding the per-word lookups (and
  // fitting prefix_lengths_); real keywords are far shorter.
  static constexpr std::size_t kMaxPrefix = 48;

  void mark(std::string_view text, std::uint64_t* bits) const;
  /// Whether the words before the current one (`previous`, a ring of the last kMaxWords words,
  /// `count` of them so far, the newest at `newest`) end with all but the last word of `k`.
  bool preceded_by(const Keyword& k, const std::array<std::string_view, kMaxWords>& previous,
                   std::size_t count, std::size_t newest) const;

  std::vector<Keyword> keywords_;
  WordTable by_last_word_;            // keywords whose last word must match a text word exactly
  WordTable by_last_prefix_;          // keywords whose last word is a prefix ('*')
  std::uint64_t prefix_lengths_ = 0;  // bit n: some prefix keyword's last word has n bytes
};

/// Lower-cased words of `text` as described above; views into `lowered`, which must outlive
/// them.
std::vector<std::string_view> split_words(std::string_view text, std::string& lowered);

}  // namespace mcpclass::classify::detail
