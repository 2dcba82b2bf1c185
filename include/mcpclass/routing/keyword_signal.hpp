// The `keywords` signal of the semantic router (routing.signals.keywords[i]), in the
// Semantic Router's shape:
//
//   - name: urgent_keywords
//     operator: OR            # AND: every keyword; OR: any; NOR: none
//     method: regex           # regex (default) | bm25 | ngram | fuzzy | pattern
//     keywords: ["urgent", "asap"]
//     case_sensitive: false
//     bm25_threshold: 0.1     # bm25 only
//     ngram_threshold: 0.4    # ngram only, with ngram_arity: 3
//     fuzzy_match: true       # regex: try a keyword fuzzily when it is not found exactly
//     fuzzy_threshold: 82     # fuzzy, or regex with fuzzy_match: similarity in percent
//
// Methods, as the Semantic Router means them unless noted:
// - regex: each keyword is a literal word or phrase (not a regular expression: the Router quotes
//   it), found at ASCII word boundaries (none for a keyword with Han characters, nor on a side
//   whose edge character is not an ASCII word character: there the Router's \b never matches).
//   Case-insensitive matching folds Unicode case (RE2).
// - bm25, ngram: routing/keyword_bm25.hpp, routing/keyword_ngram.hpp (scores and deviations).
// - fuzzy: routing/keyword_fuzzy.hpp: an exact (regex) hit scores 100, otherwise the best word
//   window's similarity. The published config's `method: fuzzy` with `fuzzy_threshold: 82`;
//   older Router versions read fuzzy_threshold as an edit distance (default 2), which is refused
//   here (below 50) rather than read as a similarity that matches nearly everything.
// - pattern (mcpclass's own): each keyword is an RE2 regular expression, searched unanchored;
//   linear in the text whatever the pattern.
//
// A keyword matches when its score reaches the method's threshold. Thread-safety: the settings
// are a plain value; a KeywordSignal is immutable after construction, so evaluate() may run on
// many threads at once.
#pragma once

#include <boost/json.hpp>

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace mcpclass::routing {

enum class KeywordOperator { all_of /* AND */, any_of /* OR */, none_of /* NOR */ };
enum class KeywordMethod { regex, bm25, ngram, fuzzy, pattern };

/// The Semantic Router's spelling of each ("AND", "regex", ...).
std::string_view to_string(KeywordOperator op);
std::string_view to_string(KeywordMethod method);

struct KeywordSignalSettings {
  static constexpr std::size_t kMaxKeywords = 1024;
  static constexpr std::size_t kMaxKeywordBytes = 1024;  ///< fuzzy: 64, see keyword_fuzzy.hpp

  std::string name;
  KeywordOperator op = KeywordOperator::any_of;  ///< `operator`, required as in the Router
  KeywordMethod method = KeywordMethod::regex;
  std::vector<std::string> keywords;  ///< non-empty, each non-empty
  bool case_sensitive = false;
  double bm25_threshold = 0.1;   ///< > 0, a BM25 score
  double ngram_threshold = 0.4;  ///< in (0, 1]
  std::size_t ngram_arity = 3;   ///< in [2, 8]
  bool fuzzy_match = false;      ///< true for method fuzzy
  double fuzzy_threshold = 80;   ///< in [50, 100]

  /// Reads one entry of routing.signals.keywords; `path` names it
  /// (`routing.signals.keywords[2]`). Throws util::ConfigError naming the key
  /// (`routing.signals.keywords[2].method`) for a missing, mistyped, out-of-range or unknown
  /// key, and for a threshold given to a method that does not use it. Patterns are compiled by
  /// KeywordSignal.
  static KeywordSignalSettings from_json(const boost::json::value& v, const std::string& path);
  /// The keys from_json reads, those of other methods left out (round-trips).
  boost::json::object to_json() const;
};

/// What one evaluation found.
struct KeywordSignalResult {
  bool matched = false;
  /// The keywords found, in configuration order; empty for NOR (which matches when none is).
  std::vector<std::string> keywords;
  /// The best score any keyword reached, found or not: 1 or 0 for regex and pattern, the BM25
  /// score for bm25 (not bounded by 1), the similarity in [0, 1] for ngram and fuzzy.
  double score = 0.0;
};

class KeywordSignal {
 public:
  /// Compiles the keywords. `path` names the settings in errors: a pattern RE2 refuses, or one
  /// that matches the empty string, throws util::ConfigError at `path.keywords[i]`, as does a
  /// bm25 keyword of stop words only.
  KeywordSignal(KeywordSignalSettings settings, const std::string& path);
  ~KeywordSignal();
  KeywordSignal(KeywordSignal&&) noexcept;
  KeywordSignal& operator=(KeywordSignal&&) noexcept;

  /// from_json, then the constructor.
  static KeywordSignal from_json(const boost::json::value& v, const std::string& path);

  const KeywordSignalSettings& settings() const noexcept { return settings_; }
  const std::string& name() const noexcept { return settings_.name; }

  /// Work linear in the text's bytes per keyword; any bytes, valid UTF-8 or not.
  KeywordSignalResult evaluate(std::string_view text) const;

 private:
  struct Engines;
  KeywordSignalSettings settings_;
  std::unique_ptr<const Engines> engines_;
};

}  // namespace mcpclass::routing
