// Internal: what an encoder hands its heads: the final hidden state of every token of every
// text of a batch. Any encoder (BERT's, ModernBERT's) fills it, so a head serves them all.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace mcpclass::architectures {

struct HiddenStates {
  std::size_t width = 0;               ///< hidden_size
  std::vector<float> values;           ///< rows × width
  std::vector<std::size_t> first_row;  ///< per text: the row of its first token
  std::vector<std::size_t> tokens;     ///< per text: its tokens (consecutive rows)

  std::size_t texts() const { return tokens.size(); }
  /// Text `i`'s tokens × width values.
  std::span<const float> text(std::size_t i) const {
    return {values.data() + first_row[i] * width, tokens[i] * width};
  }
};

}  // namespace mcpclass::architectures
