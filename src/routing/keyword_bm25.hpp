// Internal: the bm25 keyword method, as the Semantic Router computes it (its Go port of the bm25
// crate): the signal's keywords are the corpus, one document each, and the text is the query. A
// keyword's score is the sum, over the text's terms with repetition, of
// idf(term) · tf·(k1+1) / (tf + k1·(1 − b + b·|keyword|/avgdl)), with k1 = 1.2, b = 0.75,
// idf = ln(1 + (N − n + 0.5)/(n + 0.5)) over the N keywords, n of which contain the term.
//
// Terms: words (ASCII letters and digits, joined across '.', ':' and '\'' between letters and
// '.', ',', ';' and '\'' between digits, and by '_', as Unicode word segmentation does for
// ASCII), lower-cased, less NLTK's English stop words. Deviations: no Porter2 stemming (the
// Router stems, so "debugging" matches "debug" there and not here), no transliteration of
// non-ASCII letters (kept as word bytes), and case_sensitive keeps case (the Router's tokenizer
// folds it whatever the setting).
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace mcpclass::routing::detail {

/// The BM25 terms of `text`, in order, with repetition (views into `text`).
std::vector<std::string_view> bm25_terms(std::string_view text);

class Bm25Keywords {
 public:
  /// Throws util::ConfigError at `path`.keywords[i] for a keyword without a term (only stop
  /// words or punctuation): it could never score.
  Bm25Keywords(const std::vector<std::string>& keywords, bool case_sensitive,
               const std::string& path);

  /// Each keyword's BM25 score (by index) with `text` as the query.
  void score(std::string_view text, std::span<double> scores) const;

 private:
  struct Posting {
    std::size_t keyword;
    double weight;  ///< idf · BM25 term weight
  };
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const noexcept {
      return std::hash<std::string_view>{}(s);
    }
  };
  bool case_sensitive_;
  std::unordered_map<std::string, std::vector<Posting>, Hash, std::equal_to<>> postings_;
};

}  // namespace mcpclass::routing::detail
