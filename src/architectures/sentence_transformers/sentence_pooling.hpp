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
/// Pure; hidden.width must equal pooling.word_embedding_dimension.
std::vector<float> pool_sentences(const HiddenStates& hidden, const SentencePooling& pooling);

/// Normalize: each row of `width` values divided by max(its L2 norm, 1e-12), as
/// torch.nn.functional.normalize(p=2, dim=1).
void normalize_rows(std::span<float> rows, std::size_t width);

}  // namespace mcpclass::architectures
