// Truncation with stride windows, as the reference's Encoding::truncate cuts them.
#pragma once

#include "mcpclass/tokenizers/text_tokenizer.hpp"

namespace mcpclass::tokenizers::hf {

enum class TruncationSide { right, left };

/// Keeps the first `max_length` tokens of `e` (the last ones for `left`) and moves the rest into
/// e.overflowing as windows of max_length tokens, each starting max_length - stride tokens after
/// the previous. Throws ClassifyError when stride >= max_length.
void truncate(TokenizedText& e, std::size_t max_length, std::size_t stride, TruncationSide side);

/// tokenizer.json's truncation strategy for pairs.
enum class PairTruncation { longest_first, only_first, only_second };

/// Cuts a pair to `max_length` tokens in all as the reference's truncate_encodings does (no
/// overflowing windows): longest_first shortens the longer text first, halving max_length
/// between them when both are long; only_first / only_second cut one text and throw
/// ClassifyError when that is not enough. This is tokenizers' truncate_encodings (and its unit
/// tests' table); JsonTokenizer::encode_pair first models each text only up to max_length
/// tokens, as tokenizers does, which decides which of two long texts is the longer.
void truncate_pair(TokenizedText& a, TokenizedText& b, std::size_t max_length,
                   PairTruncation strategy, TruncationSide side);

}  // namespace mcpclass::tokenizers::hf
