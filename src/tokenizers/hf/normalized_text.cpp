#include "tokenizers/hf/normalized_text.hpp"

#include "tokenizers/hf/unicode.hpp"

namespace mcpclass::tokenizers::hf {

NormalizedText::NormalizedText(std::string_view text, std::size_t base) : text_(text), base_(base) {
  align_.resize(text.size());
  std::size_t i = 0;
  while (i < text.size()) {
    std::size_t len = 0;
    decode_utf8(text, i, len);
    const Span s{static_cast<std::uint32_t>(base + i), static_cast<std::uint32_t>(base + i + len)};
    for (std::size_t k = 0; k < len; ++k) align_[i + k] = s;
    i += len;
  }
}

Span NormalizedText::original_span(std::size_t begin, std::size_t end) const {
  if (begin >= end || end > align_.size()) {
    // An empty range maps to the position it sits at.
    const std::uint32_t at = begin < align_.size() ? align_[begin].start
                             : align_.empty()      ? static_cast<std::uint32_t>(base_)
                                                   : align_.back().end;
    return {at, at};
  }
  return {align_[begin].start, align_[end - 1].end};
}

std::vector<char32_t> NormalizedText::chars() const {
  std::vector<char32_t> out;
  out.reserve(text_.size());
  std::size_t i = 0;
  while (i < text_.size()) {
    std::size_t len = 0;
    out.push_back(decode_utf8(text_, i, len));
    i += len;
  }
  return out;
}

void NormalizedText::transform(const std::vector<CharChange>& changes,
                               std::size_t initial_removed) {
  std::string text;
  std::vector<Span> align;
  text.reserve(text_.size() + changes.size());
  align.reserve(text_.size() + changes.size());
  std::size_t offset = 0;
  for (std::size_t k = 0; k < initial_removed && offset < text_.size(); ++k) {
    std::size_t len = 0;
    decode_utf8(text_, offset, len);
    offset += len;
  }
  const Span start_span{static_cast<std::uint32_t>(base_), static_cast<std::uint32_t>(base_)};
  for (const CharChange& ch : changes) {
    Span a;
    if (ch.change > 0) {
      a = offset < 1 ? start_span : align_[offset - 1];
    } else {
      a = offset < align_.size() ? align_[offset] : (align_.empty() ? start_span : align_.back());
      std::size_t len = 0;
      if (offset < text_.size()) {
        decode_utf8(text_, offset, len);
        offset += len;
      }
      for (int r = 0; r < -ch.change && offset < text_.size(); ++r) {
        decode_utf8(text_, offset, len);
        offset += len;
      }
    }
    const std::size_t before = text.size();
    append_utf8(text, ch.c);
    align.insert(align.end(), text.size() - before, a);
  }
  text_ = std::move(text);
  align_ = std::move(align);
}

NormalizedText NormalizedText::slice(std::size_t begin, std::size_t end) const {
  NormalizedText out;
  out.text_ = text_.substr(begin, end - begin);
  out.align_.assign(align_.begin() + static_cast<std::ptrdiff_t>(begin),
                    align_.begin() + static_cast<std::ptrdiff_t>(end));
  out.base_ = begin < align_.size() ? align_[begin].start : base_;
  return out;
}

void NormalizedText::prepend(std::string_view s) {
  if (text_.empty() || s.empty()) return;
  std::vector<CharChange> out;
  std::size_t i = 0;
  bool first = true;
  while (i < s.size()) {
    std::size_t len = 0;
    out.push_back({decode_utf8(s, i, len), first ? 0 : 1});
    first = false;
    i += len;
  }
  const auto cs = chars();
  out.push_back({cs[0], 1});
  for (std::size_t k = 1; k < cs.size(); ++k) out.push_back({cs[k], 0});
  transform(out, 0);
}

void NormalizedText::replace(const std::vector<std::pair<std::size_t, std::size_t>>& matches,
                             std::string_view content) {
  if (matches.empty()) return;
  std::string text;
  std::vector<Span> align;
  text.reserve(text_.size());
  align.reserve(text_.size());
  std::size_t last = 0;
  for (const auto& [b, e] : matches) {
    text.append(text_, last, b - last);
    align.insert(align.end(), align_.begin() + static_cast<std::ptrdiff_t>(last),
                 align_.begin() + static_cast<std::ptrdiff_t>(b));
    // Inserted characters share the alignment of the last byte they replace.
    const Span a = e >= 1
                       ? align_[e - 1]
                       : Span{static_cast<std::uint32_t>(base_), static_cast<std::uint32_t>(base_)};
    text.append(content);
    align.insert(align.end(), content.size(), a);
    last = e;
  }
  text.append(text_, last, std::string::npos);
  align.insert(align.end(), align_.begin() + static_cast<std::ptrdiff_t>(last), align_.end());
  text_ = std::move(text);
  align_ = std::move(align);
}

}  // namespace mcpclass::tokenizers::hf
