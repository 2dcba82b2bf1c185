#include "architectures/sentence_transformers/sentence_pooling.hpp"

#include <algorithm>
#include <cmath>

namespace mcpclass::architectures {

namespace {

// One text's tokens × w values into `out` (pooling.dimension() floats); tokens before `first`
// are masked.
void pool_text(std::span<const float> x, std::size_t n, std::size_t first, std::size_t w,
               const SentencePooling& p, float* out) {
  auto next = [&out, w]() {
    float* o = out;
    out += w;
    return o;
  };
  if (p.cls) std::copy_n(x.data(), w, next());
  if (p.max) {
    float* o = next();
    std::fill_n(o, w, -1e9f);  // Pooling.forward's fill of the masked tokens
    for (std::size_t t = first; t < n; ++t)
      for (std::size_t j = 0; j < w; ++j) o[j] = std::max(o[j], x[t * w + j]);
  }
  if (p.mean || p.mean_sqrt_len) {
    std::vector<float> sum(w, 0.0f);
    for (std::size_t t = first; t < n; ++t)
      for (std::size_t j = 0; j < w; ++j) sum[j] += x[t * w + j];
    const auto count = std::max(static_cast<float>(n - std::min(first, n)), 1e-9f);
    if (p.mean) {
      float* o = next();
      for (std::size_t j = 0; j < w; ++j) o[j] = sum[j] / count;
    }
    if (p.mean_sqrt_len) {
      float* o = next();
      const float root = std::sqrt(count);
      for (std::size_t j = 0; j < w; ++j) o[j] = sum[j] / root;
    }
  }
  if (p.weighted_mean) {  // position weights 1..n
    float* o = next();
    std::fill_n(o, w, 0.0f);
    float total = 0.0f;
    for (std::size_t t = first; t < n; ++t) {
      const auto weight = static_cast<float>(t + 1);
      total += weight;
      for (std::size_t j = 0; j < w; ++j) o[j] += weight * x[t * w + j];
    }
    total = std::max(total, 1e-9f);
    for (std::size_t j = 0; j < w; ++j) o[j] /= total;
  }
  if (p.last_token) {
    float* o = next();
    if (n > first)
      std::copy_n(x.data() + (n - 1) * w, w, o);
    else
      std::fill_n(o, w, 0.0f);
  }
}

}  // namespace

std::vector<float> pool_sentences(const HiddenStates& hidden, const SentencePooling& pooling,
                                  std::size_t masked) {
  const std::size_t d = pooling.dimension(), w = hidden.width;
  std::vector<float> out(hidden.texts() * d, 0.0f);
  for (std::size_t i = 0; i < hidden.texts(); ++i)
    if (hidden.tokens[i] > 0)
      pool_text(hidden.text(i), hidden.tokens[i], masked, w, pooling, &out[i * d]);
  return out;
}

void normalize_rows(std::span<float> rows, std::size_t width) {
  for (std::size_t r = 0; r + width <= rows.size(); r += width) {
    double norm = 0.0;
    for (std::size_t j = 0; j < width; ++j) norm += static_cast<double>(rows[r + j]) * rows[r + j];
    const auto scale = static_cast<float>(1.0 / std::max(std::sqrt(norm), 1e-12));
    for (std::size_t j = 0; j < width; ++j) rows[r + j] *= scale;
  }
}

}  // namespace mcpclass::architectures
