// Internal: finds which of many keywords occur in a text, in one linear pass over its words. A
// hash index over words replaces per-keyword regexes, whose Unicode word-boundary classes made
// a few hundred keywords exceed any sensible RE2 memory budget.
//
// Words are maximal runs of ASCII letters, digits, '_', '+', '#' (so "C++" and "C#" are words)
// and non-ASCII bytes (so words in other scripts stay whole); everything else separates words.
// Case folding is ASCII-only. Keywords are split the same way, so "object-oriented" matches
// "object oriented" and "Object-Oriented".
//
// The text is neither copied nor lower-cased: words are views into it, looked up with an
// ASCII-case-insensitive hash, and keywords are indexed by their last word so that only the few
// words before the current one are kept. A match costs no allocation for up to
// kInlineKeywords keywords, whatever the text's length.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
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
    std::array<std::uint64_t, kInlineKeywords / 64> inline_bits{};
    std::vector<std::uint64_t> heap_bits;
    std::uint64_t* bits = inline_bits.data();
    if (keywords_.size() > kInlineKeywords) {
      heap_bits.assign((keywords_.size() + 63) / 64, 0);
      bits = heap_bits.data();
    }
    mark(text, bits);
    for (std::size_t id = 0; id < keywords_.size(); ++id)
      if (bits[id / 64] >> (id % 64) & 1U) found(id);
  }

  static constexpr std::size_t kMaxWords = 16;
  static constexpr std::size_t kInlineKeywords = 4096;

 private:
  struct Keyword {
    std::vector<std::string> words;  // lower-case
    bool prefix;                     ///< The last word matches any word it begins.
  };
  // ASCII-case-insensitive hashing and equality, so text words are looked up without a copy.
  struct FoldedHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const noexcept;
  };
  struct FoldedEqual {
    using is_transparent = void;
    bool operator()(std::string_view a, std::string_view b) const noexcept;
  };
  using Index = std::unordered_map<std::string, std::vector<std::size_t>, FoldedHash, FoldedEqual>;

  // Single-word prefixes longer than this are refused, bounding the per-word lookups; real
  // keywords are far shorter.
  static constexpr std::size_t kMaxPrefix = 48;

  void mark(std::string_view text, std::uint64_t* bits) const;
  /// Whether the words before the current one (`previous`, a ring of the last kMaxWords words,
  /// `count` of them so far, the newest at `newest`) end with all but the last word of `k`.
  bool preceded_by(const Keyword& k, const std::array<std::string_view, kMaxWords>& previous,
                   std::size_t count, std::size_t newest) const;

  std::vector<Keyword> keywords_;
  Index by_last_word_;    // keywords whose last word must match a text word exactly
  Index by_last_prefix_;  // keywords whose last word is a prefix ('*')
  std::size_t longest_prefix_ = 0;
};

/// Lower-cased words of `text` as described above; views into `lowered`, which must outlive
/// them.
std::vector<std::string_view> split_words(std::string_view text, std::string& lowered);

}  // namespace mcpclass::classify::detail
