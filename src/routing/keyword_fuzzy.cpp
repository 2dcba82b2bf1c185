#include "routing/keyword_fuzzy.hpp"

#include "routing/keyword_text.hpp"

#include <algorithm>
#include <bit>

namespace mcpclass::routing::detail {

namespace {

bool in_word(unsigned char c) {
  return is_word_byte(c);
}

std::string join(const std::vector<std::string_view>& words, std::size_t from, std::size_t count) {
  std::string out;
  for (std::size_t i = from; i < from + count; ++i) {
    if (i > from) out += ' ';
    out += words[i];
  }
  return out;
}

}  // namespace

std::string FuzzyKeywords::normalize(std::string_view keyword, bool case_sensitive) {
  const std::string folded = fold_case(keyword, !case_sensitive);
  const auto words = split_words(folded, in_word);
  return join(words, 0, words.size());
}

FuzzyKeywords::FuzzyKeywords(const std::vector<std::string>& keywords, bool case_sensitive)
    : case_sensitive_(case_sensitive) {
  for (const auto& keyword : keywords) {
    Keyword k;
    k.text = normalize(keyword, case_sensitive);
    k.words = static_cast<std::size_t>(std::count(k.text.begin(), k.text.end(), ' ')) + 1;
    for (std::size_t i = 0; i < k.text.size() && i < kMaxKeywordBytes; ++i)
      k.positions[static_cast<unsigned char>(k.text[i])] |= std::uint64_t{1} << i;
    keywords_.push_back(std::move(k));
  }
}

// Longest common subsequence by Hyyrö's bit-parallel recurrence (the keyword is the bit vector),
// then the Indel similarity: indel distance = |a| + |b| − 2·LCS.
double FuzzyKeywords::similarity(const Keyword& k, std::string_view window) {
  const std::size_t n = k.text.size();
  if (n == 0 || window.empty()) return 0.0;
  std::uint64_t s = ~std::uint64_t{0};
  for (const char c : window) {
    const std::uint64_t u = s & k.positions[static_cast<unsigned char>(c)];
    s = (s + u) | (s - u);
  }
  const std::uint64_t mask = n == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << n) - 1;
  const auto lcs = static_cast<double>(std::popcount(~s & mask));
  const auto total = static_cast<double>(n + window.size());
  return 100.0 * (1.0 - (total - 2.0 * lcs) / total);
}

void FuzzyKeywords::score(std::string_view text, std::span<double> scores) const {
  const std::string folded = fold_case(text, !case_sensitive_);
  const auto words = split_words(folded, in_word);
  // starts[i]: bytes of the first i words, so a window's length costs O(1).
  std::vector<std::size_t> starts(words.size() + 1, 0);
  for (std::size_t i = 0; i < words.size(); ++i) starts[i + 1] = starts[i] + words[i].size();
  std::string window;
  for (std::size_t k = 0; k < keywords_.size(); ++k) {
    const Keyword& keyword = keywords_[k];
    const std::size_t longest = 3 * keyword.text.size();
    double best = 0.0;
    for (std::size_t count = std::max<std::size_t>(keyword.words, 2) - 1;
         count <= keyword.words + 1 && best < 100.0; ++count) {
      for (std::size_t from = 0; from + count <= words.size(); ++from) {
        // Windows too long to reach 50 are not built.
        if (starts[from + count] - starts[from] + count - 1 > longest) continue;
        window.clear();
        for (std::size_t i = from; i < from + count; ++i) {
          if (i > from) window += ' ';
          window += words[i];
        }
        best = std::max(best, similarity(keyword, window));
        if (best >= 100.0) break;
      }
    }
    scores[k] = best;
  }
}

}  // namespace mcpclass::routing::detail
