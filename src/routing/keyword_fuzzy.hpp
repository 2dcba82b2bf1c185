// Internal: the fuzzy keyword method, a typo-tolerant match scored 0-100 like rapidfuzz's
// fuzz.partial_ratio restricted to word windows: for a keyword of n words, every window of n-1, n
// and n+1 consecutive text words (joined by one space) is compared with the keyword by the
// normalized Indel similarity 100·(1 − indel/(|a|+|b|)) (rapidfuzz's fuzz.ratio), and the best
// window is the keyword's score. "pasword" scores 93 against "password", "passport" 75.
//
// Bounded work on any text: a keyword is at most kMaxKeywordBytes, so its longest common
// subsequence with a window is one bit-parallel pass over the window (Hyyrö), and windows longer
// than three times the keyword are skipped, since their similarity cannot exceed 50 (the lowest
// threshold the settings accept). So a keyword costs at most three windows per text word, each
// O(3·|keyword|) bytes: linear in the text, and a signal's cost is that times its keywords.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace mcpclass::routing::detail {

class FuzzyKeywords {
 public:
  static constexpr std::size_t kMaxKeywordBytes = 64;

  /// `keywords` are checked by the settings (non-empty, at most kMaxKeywordBytes after joining
  /// their words with single spaces).
  FuzzyKeywords(const std::vector<std::string>& keywords, bool case_sensitive);

  /// The best similarity in [0, 100] of each keyword (by index) over `text`; `scores` has one
  /// entry per keyword.
  void score(std::string_view text, std::span<double> scores) const;

  /// The keyword as the method compares it: case-folded words joined by single spaces.
  static std::string normalize(std::string_view keyword, bool case_sensitive);

 private:
  struct Keyword {
    std::string text;  ///< normalized
    std::size_t words = 0;
    std::array<std::uint64_t, 256> positions{};  ///< bit i: text[i] is the byte
  };
  static double similarity(const Keyword& k, std::string_view window);

  std::vector<Keyword> keywords_;
  bool case_sensitive_;
};

}  // namespace mcpclass::routing::detail
