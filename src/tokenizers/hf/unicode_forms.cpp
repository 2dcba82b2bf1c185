// NFC/NFD/NFKC/NFKD by character, so that each output character knows which input characters
// it came from (the reference uses unicode-normalization-alignments: a decomposed character's
// first part replaces it, the others are inserted; a composition absorbs what it combines).
#include "tokenizers/hf/normalizers.hpp"
#include "tokenizers/hf/unicode.hpp"

#include <utf8proc.h>

#include <algorithm>

namespace mcpclass::tokenizers::hf {

namespace {

// How many input characters an output character stands for.
int consumed(int change) {
  return change > 0 ? 0 : 1 - change;
}
int change_for(int consumed_chars) {
  return consumed_chars == 0 ? 1 : 1 - consumed_chars;
}

std::vector<CharChange> decompose(const std::vector<char32_t>& in, bool compat) {
  std::vector<CharChange> out;
  out.reserve(in.size());
  utf8proc_int32_t buf[32];
  const auto options =
      static_cast<utf8proc_option_t>(UTF8PROC_DECOMPOSE | (compat ? UTF8PROC_COMPAT : 0));
  for (char32_t c : in) {
    if (c < 0x80) {
      out.push_back({c, 0});
      continue;
    }
    int boundclass = 0;
    const auto n =
        utf8proc_decompose_char(static_cast<utf8proc_int32_t>(c), buf, 32, options, &boundclass);
    if (n <= 0) {
      out.push_back({c, 0});
      continue;
    }
    for (utf8proc_ssize_t k = 0; k < n; ++k)
      out.push_back({static_cast<char32_t>(buf[k]), k == 0 ? 0 : 1});
  }
  // Canonical ordering: stable sort of each run of combining marks by combining class.
  std::size_t i = 0;
  while (i < out.size()) {
    if (combining_class(out[i].c) == 0) {
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j < out.size() && combining_class(out[j].c) != 0) ++j;
    if (j - i > 1)
      std::stable_sort(out.begin() + static_cast<std::ptrdiff_t>(i),
                       out.begin() + static_cast<std::ptrdiff_t>(j),
                       [](const CharChange& a, const CharChange& b) {
                         return combining_class(a.c) < combining_class(b.c);
                       });
    i = j;
  }
  return out;
}

// The primary composite of a + b, or 0.
char32_t compose_pair(char32_t a, char32_t b) {
  utf8proc_int32_t buf[2] = {static_cast<utf8proc_int32_t>(a), static_cast<utf8proc_int32_t>(b)};
  const auto n = utf8proc_normalize_utf32(
      buf, 2, static_cast<utf8proc_option_t>(UTF8PROC_COMPOSE | UTF8PROC_STABLE));
  return n == 1 ? static_cast<char32_t>(buf[0]) : 0;
}

std::vector<CharChange> compose(std::vector<CharChange> in) {
  std::vector<CharChange> out;
  out.reserve(in.size());
  std::ptrdiff_t starter = -1;
  int last_class = -1;
  for (const CharChange& ch : in) {
    const int cc = combining_class(ch.c);
    if (starter >= 0 && ch.c >= 0x80 &&
        (last_class < cc ||
         (last_class == 0 && cc == 0 && static_cast<std::ptrdiff_t>(out.size()) - 1 == starter))) {
      if (const char32_t composite = compose_pair(out[static_cast<std::size_t>(starter)].c, ch.c)) {
        CharChange& s = out[static_cast<std::size_t>(starter)];
        s.c = composite;
        s.change = change_for(consumed(s.change) + consumed(ch.change));
        continue;
      }
    }
    if (cc == 0) {
      starter = static_cast<std::ptrdiff_t>(out.size());
      last_class = 0;
    } else {
      last_class = cc;
    }
    out.push_back(ch);
  }
  return out;
}

}  // namespace

void unicode_normalize(NormalizedText& text, UnicodeForm form) {
  const std::string& s = text.text();
  if (std::all_of(s.begin(), s.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; }))
    return;
  const bool compat = form == UnicodeForm::nfkc || form == UnicodeForm::nfkd;
  auto changes = decompose(text.chars(), compat);
  if (form == UnicodeForm::nfc || form == UnicodeForm::nfkc) changes = compose(std::move(changes));
  text.transform(changes, 0);
}

}  // namespace mcpclass::tokenizers::hf
