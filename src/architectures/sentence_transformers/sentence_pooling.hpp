// Internal: sentence-transformers' Pooling and Normalize modules on an encoder's hidden states
// (sentence_transformers/models/Pooling.py, Normalize.py). Every text's rows are its own tokens,
// so the attention mask Pooling applies is all ones here.
#pragma once

#include "architectures/common/hidden_states.hpp"
#include "architectures/sentence_transformers/sentence_transformer_config.hpp"

#include <cstddef>
#include <span>
#include <vector>

namespace mcpclass::architectures {

/// Row-major `hidden.texts() × pooling.dimension()`: each text's modes concatenated in
/// Pooling.forward's order (cls, max, mean, mean_sqrt_len, weightedmean, lasttoken).
/// `masked`: the first tokens of every text left out as Pooling's include_prompt false leaves
/// the prompt's out (its attention_mask[:, :prompt_length] = 0; cls still reads token 0, the
/// weighted mean keeps the tokens' positions, a text with no token left pools to zeros, max
/// to −1e9). Pure; hidden.width must equal pooling.word_embedding_dimension.
std::vector<float> pool_sentences(const HiddenStates& hidden, const SentencePooling& pooling,
                                  std::size_t masked = 0);

/// Normalize: each row of `width` values divided by max(its L2 norm, 1e-12), as
/// torch.nn.functional.normalize(p=2, dim=1).
void normalize_rows(std::span<float> rows, std::size_t width);

}  // namespace mcpclass::architectures
