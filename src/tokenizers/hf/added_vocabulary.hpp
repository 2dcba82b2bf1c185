// Added tokens ("added_tokens"): found in the text before the pipeline runs, leftmost-longest,
// those with normalized=false in the raw text, the others in the normalized text.
#pragma once

#include "tokenizers/hf/pieces.hpp"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace mcpclass::tokenizers::hf {

class Normalizer;

struct AddedToken {
  std::int32_t id = 0;
  std::string content;
  bool single_word = false;
  bool lstrip = false;
  bool rstrip = false;
  bool normalized = true;
  bool special = false;
};

/// Immutable after construction; split() may be called concurrently.
class AddedVocabulary {
 public:
  AddedVocabulary() = default;
  /// `normalizer` (may be null) normalizes the contents of tokens with normalized=true.
  AddedVocabulary(std::vector<AddedToken> tokens, const Normalizer* normalizer);
  /// Cuts the added tokens with `normalized` == the flag out of each untokenized piece.
  void split(std::vector<Piece>& pieces, bool normalized) const;
  const std::vector<AddedToken>& tokens() const { return tokens_; }

 private:
  struct Matcher {
    std::vector<std::pair<std::string, std::size_t>> patterns;  // (text, token index)
    std::array<std::vector<std::size_t>, 256> by_first_byte;    // indices, longest first
    void build();
  };
  std::vector<Piece> split_one(NormalizedText&& t, const Matcher& m) const;

  std::vector<AddedToken> tokens_;
  Matcher raw_;
  Matcher normalized_;
};

}  // namespace mcpclass::tokenizers::hf
