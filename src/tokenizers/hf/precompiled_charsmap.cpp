#include "tokenizers/hf/precompiled_charsmap.hpp"

#include "mcpclass/classify/errors.hpp"
#include "tokenizers/hf/unicode.hpp"

#include <utf8proc.h>

#include <cstring>

namespace mcpclass::tokenizers::hf {

namespace {

std::string base64_decode(const std::string& in) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  std::string out;
  out.reserve(in.size() * 3 / 4);
  std::uint32_t acc = 0;
  int bits = 0;
  for (char c : in) {
    if (c == '=') break;
    const int v = value(c);
    if (v < 0) throw classify::ClassifyError("Precompiled: precompiled_charsmap is not base64");
    acc = (acc << 6) | static_cast<std::uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xFF));
    }
  }
  return out;
}

// darts-clone unit accessors.
bool has_leaf(std::uint32_t u) {
  return ((u >> 8) & 1) == 1;
}
std::uint32_t unit_value(std::uint32_t u) {
  return u & ((1u << 31) - 1);
}
std::uint32_t unit_label(std::uint32_t u) {
  return u & ((1u << 31) | 0xFF);
}
std::uint32_t unit_offset(std::uint32_t u) {
  return (u >> 10) << ((u & (1u << 9)) >> 6);
}

// The reference's change bookkeeping for one replaced part.
void replace_part(std::vector<CharChange>& out, std::string_view old_part, std::string_view repl) {
  std::size_t old_count = 0;
  for (char c : old_part) old_count += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  std::size_t i = 0, new_count = 0;
  while (i < repl.size()) {
    std::size_t len = 0;
    out.push_back({decode_utf8(repl, i, len), 0});
    i += len;
    ++new_count;
  }
  const auto diff = static_cast<long>(new_count) - static_cast<long>(old_count);
  if (diff > 0) {
    for (long k = 0; k < diff && k < static_cast<long>(out.size()); ++k)
      out[out.size() - 1 - static_cast<std::size_t>(k)].change = 1;
  } else if (diff < 0 && !out.empty()) {
    out.back().change += static_cast<int>(diff);
  }
}

}  // namespace

PrecompiledCharsmap PrecompiledCharsmap::from_base64(const std::string& base64) {
  return PrecompiledCharsmap(base64_decode(base64));
}

PrecompiledCharsmap::PrecompiledCharsmap(std::string blob) {
  if (blob.size() < 4)
    throw classify::ClassifyError("Precompiled: precompiled_charsmap is too short");
  std::uint32_t trie_size = 0;
  for (int k = 3; k >= 0; --k)
    trie_size = (trie_size << 8) | static_cast<unsigned char>(blob[static_cast<std::size_t>(k)]);
  if (trie_size > blob.size() - 4 || trie_size % 4 != 0)
    throw classify::ClassifyError("Precompiled: the trie size exceeds precompiled_charsmap");
  units_.resize(trie_size / 4);
  for (std::size_t k = 0; k < units_.size(); ++k) {
    std::uint32_t u = 0;
    for (int b = 3; b >= 0; --b)
      u = (u << 8) | static_cast<unsigned char>(blob[4 + k * 4 + static_cast<std::size_t>(b)]);
    units_[k] = u;
  }
  strings_ = blob.substr(4 + trie_size);
}

std::optional<std::string_view> PrecompiledCharsmap::transform(std::string_view chunk) const {
  if (units_.empty()) return std::nullopt;
  std::size_t pos = unit_offset(units_[0]);
  for (char ch : chunk) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == 0) break;
    pos ^= c;
    if (pos >= units_.size()) return std::nullopt;
    const std::uint32_t u = units_[pos];
    if (unit_label(u) != c) return std::nullopt;
    pos ^= unit_offset(u);
    if (pos >= units_.size()) return std::nullopt;
    if (has_leaf(u)) {
      // The reference takes the first (shortest) match.
      const std::size_t index = unit_value(units_[pos]);
      if (index >= strings_.size()) return std::nullopt;
      const std::size_t end = strings_.find('\0', index);
      return std::string_view(strings_).substr(
          index, (end == std::string::npos ? strings_.size() : end) - index);
    }
  }
  return std::nullopt;
}

void PrecompiledCharsmap::normalize(NormalizedText& text) const {
  const std::string& s = text.text();
  std::vector<CharChange> out;
  out.reserve(s.size());
  bool modified = false;
  auto per_char = [&](std::string_view g) {
    std::size_t i = 0;
    while (i < g.size()) {
      std::size_t len = 0;
      const char32_t c = decode_utf8(g, i, len);
      const std::string_view part = g.substr(i, len);
      if (auto norm = transform(part)) {
        modified = true;
        replace_part(out, part, *norm);
      } else {
        out.push_back({c, 0});
      }
      i += len;
    }
  };
  // Extended grapheme clusters (UAX #29), as unicode-segmentation gives them.
  std::size_t g_start = 0, i = 0;
  utf8proc_int32_t state = 0;
  char32_t prev = 0;
  bool have_prev = false;
  auto flush = [&](std::size_t g_end) {
    const std::string_view g = std::string_view(s).substr(g_start, g_end - g_start);
    if (g.size() < 6) {
      if (auto norm = transform(g)) {
        modified = true;
        replace_part(out, g, *norm);
        return;
      }
    }
    per_char(g);
  };
  while (i < s.size()) {
    std::size_t len = 0;
    const char32_t c = decode_utf8(s, i, len);
    if (have_prev && utf8proc_grapheme_break_stateful(static_cast<utf8proc_int32_t>(prev),
                                                      static_cast<utf8proc_int32_t>(c), &state)) {
      flush(i);
      g_start = i;
    }
    prev = c;
    have_prev = true;
    i += len;
  }
  if (have_prev) flush(s.size());
  if (modified) text.transform(out, 0);
}

}  // namespace mcpclass::tokenizers::hf
