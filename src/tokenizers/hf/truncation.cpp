#include "tokenizers/hf/truncation.hpp"

#include "mcpclass/classify/errors.hpp"

namespace mcpclass::tokenizers::hf {

namespace {

TokenizedText window(const TokenizedText& e, std::size_t b, std::size_t end) {
  TokenizedText w;
  const auto B = static_cast<std::ptrdiff_t>(b), E = static_cast<std::ptrdiff_t>(end);
  w.ids.assign(e.ids.begin() + B, e.ids.begin() + E);
  w.tokens.assign(e.tokens.begin() + B, e.tokens.begin() + E);
  w.offsets.assign(e.offsets.begin() + B, e.offsets.begin() + E);
  w.type_ids.assign(e.type_ids.begin() + B, e.type_ids.begin() + E);
  w.special_tokens_mask.assign(e.special_tokens_mask.begin() + B,
                               e.special_tokens_mask.begin() + E);
  return w;
}

// The first (or last) n tokens of e.
void keep(TokenizedText& e, std::size_t n, TruncationSide side) {
  if (n >= e.ids.size()) return;
  const std::size_t b = side == TruncationSide::right ? 0 : e.ids.size() - n;
  e = window(e, b, b + n);
}

}  // namespace

void truncate_pair(TokenizedText& a, TokenizedText& b, std::size_t max_length,
                   PairTruncation strategy, TruncationSide side) {
  const std::size_t total = a.ids.size() + b.ids.size();
  if (total <= max_length) return;
  if (strategy != PairTruncation::longest_first) {
    auto& cut = strategy == PairTruncation::only_first ? a : b;
    const std::size_t excess = total - max_length;
    if (excess >= cut.ids.size())
      throw classify::ClassifyError(std::string("the pair is ") + std::to_string(total) +
                                    " tokens, and truncating only the " +
                                    (strategy == PairTruncation::only_first ? "first" : "second") +
                                    " text cannot bring it to " + std::to_string(max_length));
    keep(cut, cut.ids.size() - excess, side);
    return;
  }
  // tokenizers' utils/truncation.rs, LongestFirst.
  std::size_t n1 = a.ids.size(), n2 = b.ids.size();
  const bool swap = n1 > n2;
  if (swap) std::swap(n1, n2);
  if (n1 > max_length)
    n2 = n1;
  else
    n2 = std::max(n1, max_length - n1);
  if (n1 + n2 > max_length) {
    n1 = max_length / 2;
    n2 = n1 + max_length % 2;
  }
  if (swap) std::swap(n1, n2);
  keep(a, n1, side);
  keep(b, n2, side);
}

void truncate(TokenizedText& e, std::size_t max_length, std::size_t stride, TruncationSide side) {
  const std::size_t n = e.ids.size();
  if (max_length >= n) return;
  if (max_length == 0) {
    TokenizedText all = std::move(e);
    e = TokenizedText{};
    e.overflowing.push_back(std::move(all));
    return;
  }
  if (stride >= max_length)
    throw classify::ClassifyError("truncation stride " + std::to_string(stride) +
                                  " must be below the window of " + std::to_string(max_length) +
                                  " tokens (the maximum length less the special tokens)");
  const std::size_t step = max_length - stride;
  std::vector<std::pair<std::size_t, std::size_t>> ranges;
  if (side == TruncationSide::right) {
    for (std::size_t start = 0; start < n; start += step) {
      const std::size_t stop = std::min(start + max_length, n);
      ranges.emplace_back(start, stop);
      if (stop == n) break;
    }
  } else {
    for (std::size_t k = 0;; k += step) {
      const std::size_t stop = n > k ? n - k : 0;
      const std::size_t start = stop > max_length ? stop - max_length : 0;
      ranges.emplace_back(start, stop);
      if (start == 0) break;
    }
  }
  TokenizedText first = window(e, ranges[0].first, ranges[0].second);
  for (std::size_t k = 1; k < ranges.size(); ++k)
    first.overflowing.push_back(window(e, ranges[k].first, ranges[k].second));
  e = std::move(first);
}

}  // namespace mcpclass::tokenizers::hf
