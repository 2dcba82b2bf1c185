// Truncation with stride windows, as the reference's Encoding::truncate cuts them.
#pragma once

#include "mcpclass/tokenizers/text_tokenizer.hpp"

namespace mcpclass::tokenizers::hf {

enum class TruncationSide { right, left };

/// Keeps the first `max_length` tokens of `e` (the last ones for `left`) and moves the rest into
/// e.overflowing as windows of max_length tokens, each starting max_length - stride tokens after
/// the previous. Throws ClassifyError when stride >= max_length.
void truncate(TokenizedText& e, std::size_t max_length, std::size_t stride, TruncationSide side);

}  // namespace mcpclass::tokenizers::hf
