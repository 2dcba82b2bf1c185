// Internal: the head of a *ForTokenClassification checkpoint: `classifier` (an nn.Linear from
// hidden_size to one logit a label) over every token's final hidden state, whatever encoder
// produced them (hidden_states.hpp); ModernBERT's first runs each token through its prediction
// head (prediction_head.hpp). Dropout is the identity in eval mode.
#pragma once

#include "architectures/common/hidden_states.hpp"
#include "architectures/common/prediction_head.hpp"
#include "kernels/dense_rows.hpp"

#include <cstddef>
#include <optional>
#include <vector>

namespace mcpclass::architectures {

/// Thread-safety: immutable after construction; logits() may be called concurrently.
class TokenHead {
 public:
  /// `transform`: ModernBERT's prediction head, run on every token before `classifier`.
  explicit TokenHead(kernels::Dense classifier,
                     std::optional<PredictionHead> transform = std::nullopt)
      : classifier_(std::move(classifier)), transform_(std::move(transform)) {}

  std::size_t labels() const { return classifier_.out; }
  std::size_t parameters() const {
    return classifier_.parameters() + (transform_ ? transform_->parameters() : 0);
  }

  /// Per text, its tokens × labels logits (row-major). Each text's rows go through their own
  /// blocks (dense_rows.hpp), so a batch gives every text its single-text result bit for bit.
  /// Throws ClassifyError if the hidden states' width is not the head's input.
  std::vector<std::vector<float>> logits(const HiddenStates& hidden) const;

 private:
  kernels::Dense classifier_;
  std::optional<PredictionHead> transform_;
};

}  // namespace mcpclass::architectures
