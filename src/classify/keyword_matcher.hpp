// Internal: finds which of many keywords occur in a text, in one linear pass over its words. A
// hash index over words replaces per-keyword regexes, whose Unicode word-boundary classes made
// a few hundred keywords exceed any sensible RE2 memory budget.
//
// Words are maximal runs of ASCII letters, digits, '_', '+', '#' (so "C++" and "C#" are words)
// and non-ASCII bytes (so words in other scripts stay whole); everything else separates words.
// Case folding is ASCII-only. Keywords are split the same way, so "object-oriented" matches
// "object oriented" and "Object-Oriented".
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace mcpclass::classify::detail {

class KeywordMatcher {
 public:
  /// Adds a keyword; a trailing '*' makes its last word a prefix. Returns its id (sequential
  /// from 0). Throws ConfigError without a key path (the caller knows it) for an empty keyword
  /// or a misplaced '*'.
  std::size_t add(std::string_view keyword);
  std::size_t size() const noexcept { return keywords_.size(); }

  /// Ids of the keywords found in `text`, each once, ascending. Linear in the text's length.
  std::vector<std::size_t> match(std::string_view text) const;

 private:
  struct Keyword {
    std::vector<std::string> words;
    bool prefix;  ///< The last word matches any word it begins.
  };
  // Words longer than this cannot be prefixes of a text word we look up, bounding the per-word
  // work; real keywords are far shorter.
  static constexpr std::size_t kMaxPrefix = 48;

  bool matches_at(const Keyword& k, const std::vector<std::string_view>& words,
                  std::size_t at) const;

  std::vector<Keyword> keywords_;
  std::unordered_map<std::string, std::vector<std::size_t>> by_first_word_;
  std::unordered_map<std::string, std::vector<std::size_t>> by_first_prefix_;
};

/// Lower-cased words of `text` as described above; views into `lowered`, which must outlive
/// them.
std::vector<std::string_view> split_words(std::string_view text, std::string& lowered);

}  // namespace mcpclass::classify::detail
