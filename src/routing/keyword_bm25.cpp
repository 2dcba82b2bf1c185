#include "routing/keyword_bm25.hpp"

#include "routing/keyword_text.hpp"
#include "util/config_reader.hpp"

#include <algorithm>
#include <array>
#include <cmath>

namespace mcpclass::routing::detail {

namespace {

constexpr double kK1 = 1.2;
constexpr double kB = 0.75;
constexpr double kFallbackAvgdl = 256;

// NLTK's English stop words, which the bm25 crate's tokenizer drops.
constexpr std::array<std::string_view, 179> kStopWords = {
    "i",         "me",        "my",         "myself",  "we",      "our",     "ours",
    "ourselves", "you",       "you're",     "you've",  "you'll",  "you'd",   "your",
    "yours",     "yourself",  "yourselves", "he",      "him",     "his",     "himself",
    "she",       "she's",     "her",        "hers",    "herself", "it",      "it's",
    "its",       "itself",    "they",       "them",    "their",   "theirs",  "themselves",
    "what",      "which",     "who",        "whom",    "this",    "that",    "that'll",
    "these",     "those",     "am",         "is",      "are",     "was",     "were",
    "be",        "been",      "being",      "have",    "has",     "had",     "having",
    "do",        "does",      "did",        "doing",   "a",       "an",      "the",
    "and",       "but",       "if",         "or",      "because", "as",      "until",
    "while",     "of",        "at",         "by",      "for",     "with",    "about",
    "against",   "between",   "into",       "through", "during",  "before",  "after",
    "above",     "below",     "to",         "from",    "up",      "down",    "in",
    "out",       "on",        "off",        "over",    "under",   "again",   "further",
    "then",      "once",      "here",       "there",   "when",    "where",   "why",
    "how",       "all",       "any",        "both",    "each",    "few",     "more",
    "most",      "other",     "some",       "such",    "no",      "nor",     "not",
    "only",      "own",       "same",       "so",      "than",    "too",     "very",
    "s",         "t",         "can",        "will",    "just",    "don",     "don't",
    "should",    "should've", "now",        "d",       "ll",      "m",       "o",
    "re",        "ve",        "y",          "ain",     "aren",    "aren't",  "couldn",
    "couldn't",  "didn",      "didn't",     "doesn",   "doesn't", "hadn",    "hadn't",
    "hasn",      "hasn't",    "haven",      "haven't", "isn",     "isn't",   "ma",
    "mightn",    "mightn't",  "mustn",      "mustn't", "needn",   "needn't", "shan",
    "shan't",    "shouldn",   "shouldn't",  "wasn",    "wasn't",  "weren",   "weren't",
    "won",       "won't",     "wouldn",     "wouldn't"};

bool is_stop_word(std::string_view term) {
  if (term.size() > 10) return false;
  std::array<char, 10> lower{};
  for (std::size_t i = 0; i < term.size(); ++i) {
    const char c = term[i];
    lower[i] = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  }
  const std::string_view folded(lower.data(), term.size());
  return std::find(kStopWords.begin(), kStopWords.end(), folded) != kStopWords.end();
}

bool is_letter(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0x80;
}
bool is_digit(unsigned char c) {
  return c >= '0' && c <= '9';
}

}  // namespace

std::vector<std::string_view> bm25_terms(std::string_view text) {
  std::vector<std::string_view> terms;
  const auto at = [&](std::size_t i) -> unsigned char {
    return i < text.size() ? static_cast<unsigned char>(text[i]) : 0;
  };
  std::size_t i = 0;
  while (i < text.size()) {
    if (!is_word_byte(at(i)) && at(i) != '_') {
      ++i;
      continue;
    }
    const std::size_t start = i;
    bool has_alnum = false;
    while (i < text.size()) {
      const unsigned char c = at(i);
      if (is_word_byte(c)) {
        has_alnum = true;
        ++i;
      } else if (c == '_') {
        ++i;
      } else if ((c == '.' || c == ':' || c == '\'') && i > start && is_letter(at(i - 1)) &&
                 is_letter(at(i + 1))) {
        ++i;
      } else if ((c == '.' || c == ',' || c == ';' || c == '\'') && i > start &&
                 is_digit(at(i - 1)) && is_digit(at(i + 1))) {
        ++i;
      } else {
        break;
      }
    }
    const std::string_view term = text.substr(start, i - start);
    if (has_alnum && !is_stop_word(term)) terms.push_back(term);
  }
  return terms;
}

Bm25Keywords::Bm25Keywords(const std::vector<std::string>& keywords, bool case_sensitive,
                           const std::string& path)
    : case_sensitive_(case_sensitive) {
  std::vector<std::string> folded;
  std::vector<std::vector<std::string_view>> documents;
  folded.reserve(keywords.size());
  std::size_t total = 0;
  for (std::size_t k = 0; k < keywords.size(); ++k) {
    folded.push_back(fold_case(keywords[k], !case_sensitive));
    documents.push_back(bm25_terms(folded.back()));
    if (documents.back().empty())
      util::strict::fail(util::strict::index_path(util::strict::member_path(path, "keywords"), k),
                         "keyword '" + keywords[k] +
                             "' has no term bm25 can score (only stop words or punctuation)");
    total += documents.back().size();
  }
  double avgdl = static_cast<double>(total) / static_cast<double>(documents.size());
  if (!(avgdl > 0)) avgdl = kFallbackAvgdl;
  std::unordered_map<std::string_view, std::size_t> containing;  // term -> keywords with it
  for (const auto& document : documents) {
    std::vector<std::string_view> distinct(document);
    std::sort(distinct.begin(), distinct.end());
    distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
    for (const auto term : distinct) ++containing[term];
  }
  const auto n_docs = static_cast<double>(documents.size());
  for (std::size_t k = 0; k < documents.size(); ++k) {
    const auto& document = documents[k];
    const auto length = static_cast<double>(document.size());
    std::unordered_map<std::string_view, std::size_t> tf;
    for (const auto term : document) ++tf[term];
    for (const auto& [term, count] : tf) {
      const auto n = static_cast<double>(containing[term]);
      const double idf = std::log(1.0 + (n_docs - n + 0.5) / (n + 0.5));
      const auto f = static_cast<double>(count);
      const double weight = f * (kK1 + 1) / (f + kK1 * (1 - kB + kB * length / avgdl));
      postings_[std::string(term)].push_back({k, idf * weight});
    }
  }
}

void Bm25Keywords::score(std::string_view text, std::span<double> scores) const {
  std::fill(scores.begin(), scores.end(), 0.0);
  const std::string folded = fold_case(text, !case_sensitive_);
  for (const auto term : bm25_terms(folded)) {
    const auto it = postings_.find(term);
    if (it == postings_.end()) continue;
    for (const Posting& p : it->second) scores[p.keyword] += p.weight;
  }
}

}  // namespace mcpclass::routing::detail
