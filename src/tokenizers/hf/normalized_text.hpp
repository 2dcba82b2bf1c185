// A piece of text being normalized, with the byte range of the original input every normalized
// byte came from (the reference library's NormalizedString): token offsets into the caller's
// UTF-8 text are read from it. Alignments are absolute in the original text.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace mcpclass::tokenizers::hf {

struct Span {
  std::uint32_t start = 0;
  std::uint32_t end = 0;
};

/// One output character and how it relates to the input: 0 replaces one input character, +1 is
/// inserted (it shares the previous character's alignment), -n replaces one and removes n more.
struct CharChange {
  char32_t c;
  int change;
};

class NormalizedText {
 public:
  NormalizedText() = default;
  /// `text` is the slice of the original input that starts at byte `base` of it.
  NormalizedText(std::string_view text, std::size_t base);

  const std::string& text() const { return text_; }
  bool empty() const { return text_.empty(); }
  /// Original byte range of normalized bytes [begin, end).
  Span original_span(std::size_t begin, std::size_t end) const;
  /// Original byte where this piece starts.
  std::size_t original_start() const { return base_; }

  /// Rebuilds the text from `changes`, skipping `initial_removed` characters first (the
  /// reference's `transform`).
  void transform(const std::vector<CharChange>& changes, std::size_t initial_removed);
  /// The normalized bytes [begin, end) as a piece of their own.
  NormalizedText slice(std::size_t begin, std::size_t end) const;

  /// The characters of the text, decoded.
  std::vector<char32_t> chars() const;
  template <class F>
  void map(F f) {
    std::vector<CharChange> out;
    bool changed = false;
    for (char32_t c : chars()) {
      const char32_t m = f(c);
      changed |= m != c;
      out.push_back({m, 0});
    }
    if (changed) transform(out, 0);
  }
  /// Keeps the characters `keep` accepts; a removed character is folded into the previous kept.
  template <class F>
  void filter(F keep) {
    std::vector<CharChange> out;
    int removed = 0;
    std::size_t removed_start = 0;
    bool have_last = false, any_removed = false;
    char32_t last = 0;
    for (char32_t c : chars()) {
      const bool kept = keep(c);
      any_removed |= !kept;
      if (kept) {
        if (have_last)
          out.push_back({last, -removed});
        else
          removed_start = static_cast<std::size_t>(removed);
        last = c;
        have_last = true;
        removed = 0;
      } else {
        ++removed;
      }
    }
    if (!any_removed) return;
    if (have_last) out.push_back({last, -removed});
    transform(out, removed_start);
  }
  /// Inserts `s` before the first character (the reference's `prepend`).
  void prepend(std::string_view s);
  /// Replaces every match [begin, end) of `matches` by `content`.
  void replace(const std::vector<std::pair<std::size_t, std::size_t>>& matches,
               std::string_view content);

 private:
  std::string text_;
  std::vector<Span> align_;
  std::size_t base_ = 0;
};

}  // namespace mcpclass::tokenizers::hf
