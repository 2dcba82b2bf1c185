#include "routing/keyword_ngram.hpp"

#include "routing/keyword_text.hpp"

#include <algorithm>

namespace mcpclass::routing::detail {

namespace {

bool in_ngram_word(unsigned char c) {
  return is_word_byte(c) || c == '_' || c == '-';
}

double warp2_similarity(std::size_t same, std::size_t all) {
  if (all == 0) return 0.0;
  const auto a = static_cast<double>(all);
  const double diff = a - static_cast<double>(same);
  return (a * a - diff * diff) / (a * a);
}

}  // namespace

NgramKeywords::NgramKeywords(const std::vector<std::string>& keywords, bool case_sensitive,
                             std::size_t arity)
    : arity_(arity), case_sensitive_(case_sensitive), pad_(arity - 1, ' ') {
  for (std::size_t k = 0; k < keywords.size(); ++k) {
    const std::string padded = pad_ + fold_case(keywords[k], !case_sensitive) + pad_;
    lengths_.push_back(padded.size());
    std::unordered_map<std::size_t, std::size_t> counts;  // gram id -> count in this keyword
    for (std::size_t i = 0; i + arity <= padded.size(); ++i) {
      const std::string gram = padded.substr(i, arity);
      auto [it, added] = gram_ids_.try_emplace(gram, postings_.size());
      if (added) postings_.emplace_back();
      ++counts[it->second];
    }
    for (const auto& [gram, count] : counts) postings_[gram].push_back({k, count});
  }
}

void NgramKeywords::search(std::string_view query, std::span<double> scores,
                           std::vector<std::size_t>& counts, std::vector<std::size_t>& same) const {
  const std::size_t length = query.size() + 2 * pad_.size();
  std::vector<std::size_t> touched;  // gram ids seen in the query
  auto gram_at = [&](std::size_t i) {
    // The padded query's n-gram at i without building the padded text.
    std::string gram;
    gram.reserve(arity_);
    for (std::size_t j = i; j < i + arity_; ++j)
      gram += (j < pad_.size() || j >= pad_.size() + query.size()) ? ' ' : query[j - pad_.size()];
    return gram;
  };
  for (std::size_t i = 0; i + arity_ <= length; ++i) {
    const auto it = gram_ids_.find(std::string_view(gram_at(i)));
    if (it == gram_ids_.end()) continue;
    if (counts[it->second]++ == 0) touched.push_back(it->second);
  }
  std::vector<std::size_t> keywords;  // keywords sharing a gram
  for (const std::size_t gram : touched) {
    for (const Posting& p : postings_[gram]) {
      if (same[p.keyword] == 0) keywords.push_back(p.keyword);
      same[p.keyword] += std::min(counts[gram], p.count);
    }
    counts[gram] = 0;
  }
  for (const std::size_t k : keywords) {
    const std::size_t grams = (length + 1 - arity_) + (lengths_[k] + 1 - arity_);
    scores[k] = std::max(scores[k], warp2_similarity(same[k], grams - same[k]));
    same[k] = 0;
  }
}

void NgramKeywords::score(std::string_view text, std::span<double> scores) const {
  std::fill(scores.begin(), scores.end(), 0.0);
  const std::string folded = fold_case(text, !case_sensitive_);
  std::vector<std::size_t> counts(postings_.size(), 0);
  std::vector<std::size_t> same(lengths_.size(), 0);
  for (const std::string_view word : split_words(folded, in_ngram_word))
    search(word, scores, counts, same);
  search(folded, scores, counts, same);
}

}  // namespace mcpclass::routing::detail
