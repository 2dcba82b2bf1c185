// Internal: the batching the native sentence encoders share. Texts run shortest first in
// batches of similar length, so padding wastes little; results go back in input order.
#pragma once

#include "mcpclass/learned/embedding_encoder.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

namespace mcpclass::learned::detail {

using TokenRows = std::span<const std::vector<std::int32_t>* const>;

/// Runs `forward` (one batch → rows × `dimension` floats, row-major) over `ids` in batches of at
/// most `batch_size` texts, and of at most `max_texts(longest)` when given (longest: the token
/// count of the batch's widest text). Returns ids.size() × dimension floats in input order;
/// `progress` after each batch. With several batches glibc's heap is trimmed at the end, and
/// after every batch when `trim_each_batch` (for a forward pass whose activations are unbounded).
std::vector<float> encode_by_length(const std::vector<std::vector<std::int32_t>>& ids,
                                    std::size_t dimension, std::size_t batch_size,
                                    const std::function<std::size_t(std::size_t)>& max_texts,
                                    bool trim_each_batch,
                                    const std::function<std::vector<float>(TokenRows)>& forward,
                                    const EncodeProgress& progress);

/// The SentenceEncoder members the native encoders share: encode() tokenizes every text with
/// token_ids(), encode_tokens() drops ids past max_tokens(); both hand the ids to encode_ids().
/// Thread-safety: as SentenceEncoder.
class TokenSentenceEncoder : public SentenceEncoder {
 public:
  std::vector<float> encode(std::span<const std::string> texts,
                            const EncodeProgress& progress = {}) const final;
  std::vector<float> encode_tokens(std::span<const std::vector<std::int32_t>> ids) const final;

 protected:
  /// Tokens a text keeps.
  virtual std::size_t max_tokens() const = 0;
  /// texts × dimension() vectors of already truncated ids.
  virtual std::vector<float> encode_ids(const std::vector<std::vector<std::int32_t>>& ids,
                                        const EncodeProgress& progress) const = 0;
};

}  // namespace mcpclass::learned::detail
