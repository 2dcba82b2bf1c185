#include "tokenizers/hf/added_vocabulary.hpp"

#include "tokenizers/hf/normalizers.hpp"
#include "tokenizers/hf/unicode.hpp"

#include <algorithm>
#include <cstring>

namespace mcpclass::tokenizers::hf {

namespace {

bool is_word_char(char32_t c) {
  return is_alphanumeric(c) || c == '_';
}

char32_t last_char(std::string_view s) {
  std::size_t i = s.size() - 1;
  while (i > 0 && (static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) --i;
  std::size_t len = 0;
  return decode_utf8(s, i, len);
}

}  // namespace

void AddedVocabulary::Matcher::build() {
  for (auto& v : by_first_byte) v.clear();
  for (std::size_t k = 0; k < patterns.size(); ++k)
    if (!patterns[k].first.empty())
      by_first_byte[static_cast<unsigned char>(patterns[k].first[0])].push_back(k);
  for (auto& v : by_first_byte)
    std::stable_sort(v.begin(), v.end(), [this](std::size_t a, std::size_t b) {
      return patterns[a].first.size() > patterns[b].first.size();
    });
}

AddedVocabulary::AddedVocabulary(std::vector<AddedToken> tokens, const Normalizer* normalizer)
    : tokens_(std::move(tokens)) {
  for (std::size_t k = 0; k < tokens_.size(); ++k) {
    if (!tokens_[k].normalized) {
      raw_.patterns.emplace_back(tokens_[k].content, k);
      continue;
    }
    NormalizedText t(tokens_[k].content, 0);
    if (normalizer != nullptr) normalizer->normalize(t);
    normalized_.patterns.emplace_back(t.text(), k);
  }
  raw_.build();
  normalized_.build();
}

void AddedVocabulary::split(std::vector<Piece>& pieces, bool normalized) const {
  const Matcher& m = normalized ? normalized_ : raw_;
  if (m.patterns.empty()) return;
  std::vector<Piece> out;
  for (Piece& p : pieces) {
    if (p.tokenized) {
      out.push_back(std::move(p));
      continue;
    }
    for (Piece& q : split_one(std::move(p.text), m)) out.push_back(std::move(q));
  }
  pieces = std::move(out);
}

std::vector<Piece> AddedVocabulary::split_one(NormalizedText&& t, const Matcher& m) const {
  const std::string& s = t.text();
  std::vector<Piece> out;
  std::size_t start_offset = 0;
  std::size_t i = 0;
  while (i < s.size()) {
    const auto& candidates = m.by_first_byte[static_cast<unsigned char>(s[i])];
    const std::pair<std::string, std::size_t>* hit = nullptr;
    for (std::size_t k : candidates) {
      const auto& pat = m.patterns[k].first;
      if (pat.size() <= s.size() - i && std::memcmp(s.data() + i, pat.data(), pat.size()) == 0) {
        hit = &m.patterns[k];
        break;
      }
    }
    if (hit == nullptr) {
      ++i;
      continue;
    }
    const AddedToken& tok = tokens_[hit->second];
    std::size_t start = i, stop = i + hit->first.size();
    if (tok.single_word) {
      const bool start_space =
          start == 0 || !is_word_char(last_char(std::string_view(s).substr(0, start)));
      std::size_t len = 0;
      const bool stop_space = stop == s.size() || !is_word_char(decode_utf8(s, stop, len));
      if (!start_space || !stop_space) {
        ++i;
        continue;
      }
    }
    if (tok.lstrip) {
      std::size_t b = start;
      while (b > 0) {
        std::size_t p = b - 1;
        while (p > 0 && (static_cast<unsigned char>(s[p]) & 0xC0) == 0x80) --p;
        std::size_t len = 0;
        if (!is_white_space(decode_utf8(s, p, len))) break;
        b = p;
      }
      start = std::max(b, start_offset);
    }
    if (tok.rstrip) {
      while (stop < s.size()) {
        std::size_t len = 0;
        if (!is_white_space(decode_utf8(s, stop, len))) break;
        stop += len;
      }
    }
    if (start_offset < start) out.push_back(Piece{t.slice(start_offset, start), {}, false});
    Piece added{t.slice(start, stop), {}, true};
    added.tokens.push_back(
        {tok.id, added.text.text(), 0, static_cast<std::uint32_t>(stop - start)});
    out.push_back(std::move(added));
    start_offset = stop;
    i = stop;
  }
  if (start_offset == 0) {
    out.push_back(Piece{std::move(t), {}, false});
    return out;
  }
  if (start_offset < s.size()) out.push_back(Piece{t.slice(start_offset, s.size()), {}, false});
  return out;
}

}  // namespace mcpclass::tokenizers::hf
