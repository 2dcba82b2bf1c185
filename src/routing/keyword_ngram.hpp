// Internal: the ngram keyword method, as the Semantic Router computes it (its Go port of the
// ngrammatic crate): each keyword and each text word is padded with arity−1 spaces on both
// sides and cut into character n-grams; their similarity is ngrammatic's with warp 2,
// (all² − (all − same)²) / all², where `same` counts the shared n-grams (with multiplicity) and
// `all` the n-grams of either. Text words are split at characters other than letters, digits,
// '_' and '-'; the whole text is searched too, as there, so a phrase keyword can match.
//
// Deviations: n-grams are over bytes of ASCII-folded text rather than Unicode code points of
// Unicode-lower-cased text (identical for ASCII), and every keyword over the threshold counts,
// where the Router keeps the ten best per word.
//
// Linear in the text: only n-grams some keyword has are counted, through one hash probe per
// text position.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace mcpclass::routing::detail {

class NgramKeywords {
 public:
  NgramKeywords(const std::vector<std::string>& keywords, bool case_sensitive, std::size_t arity);

  /// The best similarity in [0, 1] of each keyword (by index) over the text's words and the whole
  /// text; `scores` has one entry per keyword.
  void score(std::string_view text, std::span<double> scores) const;

 private:
  struct Posting {
    std::size_t keyword;
    std::size_t count;
  };
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const noexcept {
      return std::hash<std::string_view>{}(s);
    }
  };
  /// Similarities of `query` (unpadded) with every keyword sharing an n-gram, maxed into
  /// `scores`. `counts` and `same` are scratch space, all zero on entry and on return.
  void search(std::string_view query, std::span<double> scores, std::vector<std::size_t>& counts,
              std::vector<std::size_t>& same) const;

  std::size_t arity_;
  bool case_sensitive_;
  std::string pad_;
  std::vector<std::size_t> lengths_;  ///< padded length of each keyword
  std::unordered_map<std::string, std::size_t, Hash, std::equal_to<>> gram_ids_;
  std::vector<std::vector<Posting>> postings_;  ///< by gram id
};

}  // namespace mcpclass::routing::detail
