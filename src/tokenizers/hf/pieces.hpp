// The text between the pipeline's stages: pieces of normalized text, each with the tokens found
// in it so far (the reference's PreTokenizedString), and the splitting they all use.
#pragma once

#include "tokenizers/hf/normalized_text.hpp"
#include "tokenizers/hf/unicode.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace mcpclass::tokenizers::hf {

class Regex;

/// A token of one piece: offsets are normalized bytes of that piece.
struct Token {
  std::int32_t id = 0;
  std::string value;
  std::uint32_t begin = 0;
  std::uint32_t end = 0;
};

struct Piece {
  NormalizedText text;
  std::vector<Token> tokens;
  bool tokenized = false;  // an added token, or already run through the model
};

enum class SplitBehavior { removed, isolated, merged_with_previous, merged_with_next, contiguous };
/// Parses "Removed", "Isolated", ... Throws ClassifyError on anything else.
SplitBehavior split_behavior(const std::string& name);

struct Match {
  std::size_t begin;
  std::size_t end;
  bool is_match;
};

/// Each character `pred` accepts is a match of its own; the rest fills the gaps.
template <class Pred>
std::vector<Match> char_matches(const std::string& s, Pred pred) {
  std::vector<Match> out;
  std::size_t last = 0, i = 0;
  while (i < s.size()) {
    std::size_t len = 0;
    const char32_t c = decode_utf8(s, i, len);
    if (pred(c)) {
      if (last < i) out.push_back({last, i, false});
      out.push_back({i, i + len, true});
      last = i + len;
    }
    i += len;
  }
  if (last < s.size()) out.push_back({last, s.size(), false});
  return out;
}

std::vector<Match> regex_matches(const Regex& re, const std::string& s, bool invert);

/// Splits `text` at `matches` the way `behavior` says; empty pieces are dropped.
std::vector<NormalizedText> split_text(const NormalizedText& text,
                                       const std::vector<Match>& matches, SplitBehavior behavior);

/// Replaces each untokenized piece by the pieces `f(piece_index, text)` returns.
template <class F>
void split_pieces(std::vector<Piece>& pieces, F f) {
  std::vector<Piece> out;
  out.reserve(pieces.size() * 2);
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    if (pieces[i].tokenized) {
      out.push_back(std::move(pieces[i]));
      continue;
    }
    for (auto& t : f(i, std::move(pieces[i].text)))
      if (!t.empty()) out.push_back(Piece{std::move(t), {}, false});
  }
  pieces = std::move(out);
}

}  // namespace mcpclass::tokenizers::hf
