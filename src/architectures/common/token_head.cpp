#include "architectures/common/token_head.hpp"

#include "mcpclass/classify/errors.hpp"

#include <algorithm>

namespace mcpclass::architectures {

std::vector<std::vector<float>> TokenHead::logits(const HiddenStates& hidden) const {
  const std::size_t w = classifier_.in, labels = classifier_.out;
  if (hidden.width != w)
    throw classify::ClassifyError("hidden states of width " + std::to_string(hidden.width) +
                                  " do not fit a token head over " + std::to_string(w));
  std::size_t rows = 0;
  for (std::size_t i = 0; i < hidden.texts(); ++i) rows += kernels::padded_rows(hidden.tokens[i]);
  std::vector<float> x(rows * w, 0.0f), y(rows * labels);
  std::size_t row = 0;
  for (std::size_t i = 0; i < hidden.texts(); ++i) {
    const auto text = hidden.text(i);
    std::copy(text.begin(), text.end(), x.begin() + static_cast<std::ptrdiff_t>(row * w));
    row += kernels::padded_rows(hidden.tokens[i]);
  }
  if (transform_) transform_->apply(x, rows);
  kernels::linear(classifier_, x.data(), rows, y.data());
  std::vector<std::vector<float>> out;
  row = 0;
  for (std::size_t i = 0; i < hidden.texts(); ++i) {
    const auto first = y.begin() + static_cast<std::ptrdiff_t>(row * labels);
    out.emplace_back(first, first + static_cast<std::ptrdiff_t>(hidden.tokens[i] * labels));
    row += kernels::padded_rows(hidden.tokens[i]);
  }
  return out;
}

}  // namespace mcpclass::architectures
