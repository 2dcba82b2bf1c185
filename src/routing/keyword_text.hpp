// Internal: the text preparation the lexical keyword methods (bm25, ngram, fuzzy) share: ASCII
// case folding and splitting into words. Bytes, not code points, so no input can be malformed:
// invalid UTF-8 is just more word bytes. Non-ASCII bytes count as word characters, so words in
// other scripts stay whole; their case is not folded (the Semantic Router folds with Rust's
// Unicode to_lowercase; here only ASCII is, which the regex method's RE2 does not share).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace mcpclass::routing::detail {

/// `text` with ASCII letters lower-cased when `fold`, else unchanged.
std::string fold_case(std::string_view text, bool fold);

inline bool is_word_byte(unsigned char c) noexcept {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0x80;
}

/// Maximal runs of bytes for which `in_word` holds; views into `text`.
template <class InWord>
std::vector<std::string_view> split_words(std::string_view text, InWord in_word) {
  std::vector<std::string_view> words;
  std::size_t start = std::string_view::npos;
  for (std::size_t i = 0; i <= text.size(); ++i) {
    const bool word = i < text.size() && in_word(static_cast<unsigned char>(text[i]));
    if (word && start == std::string_view::npos) start = i;
    if (!word && start != std::string_view::npos) {
      words.push_back(text.substr(start, i - start));
      start = std::string_view::npos;
    }
  }
  return words;
}

}  // namespace mcpclass::routing::detail
