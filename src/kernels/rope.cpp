#include "kernels/rope.hpp"

#include <algorithm>
#include <cmath>

namespace mcpclass::kernels {

namespace {

// torch computes base ** (arange(0, dim, 2).float() / dim) in float32.
float position_frequency(double theta, std::size_t i, std::size_t dim) {
  return std::pow(static_cast<float>(theta), static_cast<float>(2 * i) / static_cast<float>(dim));
}

double yarn_mscale(double scale, double mscale) {
  return scale <= 1.0 ? 1.0 : 0.1 * mscale * std::log(scale) + 1.0;
}

// The dimension at which a wavelength makes `rotations` turns over the original context.
double correction_dim(double rotations, std::size_t dim, double theta, double positions) {
  return (static_cast<double>(dim) * std::log(positions / (rotations * 2.0 * M_PI))) /
         (2.0 * std::log(theta));
}

}  // namespace

RopeFrequencies rope_frequencies(const RopeSettings& s, std::size_t head_dim) {
  const std::size_t half = head_dim / 2;
  RopeFrequencies f;
  f.inverse.resize(half);
  if (s.type != RopeSettings::Type::yarn) {
    const auto factor = static_cast<float>(s.type == RopeSettings::Type::linear ? s.factor : 1.0);
    for (std::size_t i = 0; i < half; ++i) {
      f.inverse[i] = 1.0f / position_frequency(s.theta, i, head_dim);
      if (s.type == RopeSettings::Type::linear) f.inverse[i] /= factor;
    }
    return f;
  }
  // YaRN: frequencies that turn fewer than beta_slow times over the original context are
  // interpolated (divided by factor), those turning more than beta_fast times kept, a linear
  // ramp between; cos and sin are scaled by the attention factor.
  if (s.attention_factor >= 0.0)
    f.attention_scaling = static_cast<float>(s.attention_factor);
  else if (s.mscale != 0.0 && s.mscale_all_dim != 0.0)
    f.attention_scaling = static_cast<float>(yarn_mscale(s.factor, s.mscale) /
                                             yarn_mscale(s.factor, s.mscale_all_dim));
  else
    f.attention_scaling = static_cast<float>(yarn_mscale(s.factor, 1.0));
  double low = correction_dim(s.beta_fast, head_dim, s.theta, s.original_max_positions);
  double high = correction_dim(s.beta_slow, head_dim, s.theta, s.original_max_positions);
  if (s.truncate) {
    low = std::floor(low);
    high = std::ceil(high);
  }
  low = std::max(low, 0.0);
  high = std::min(high, static_cast<double>(head_dim - 1));
  if (low == high) high += 0.001;
  const auto factor = static_cast<float>(s.factor);
  for (std::size_t i = 0; i < half; ++i) {
    const float ramp = std::clamp(
        (static_cast<float>(i) - static_cast<float>(low)) / static_cast<float>(high - low), 0.0f,
        1.0f);
    const float extrapolation = 1.0f - ramp;
    const float pos = position_frequency(s.theta, i, head_dim);
    f.inverse[i] = (1.0f / (factor * pos)) * (1.0f - extrapolation) + (1.0f / pos) * extrapolation;
  }
  return f;
}

RopeTable rope_table(const RopeFrequencies& f, std::size_t tokens) {
  const std::size_t half = f.inverse.size();
  RopeTable t;
  t.cos.resize(tokens * half);
  t.sin.resize(tokens * half);
  for (std::size_t p = 0; p < tokens; ++p)
    for (std::size_t i = 0; i < half; ++i) {
      const float angle = f.inverse[i] * static_cast<float>(p);
      t.cos[p * half + i] = std::cos(angle) * f.attention_scaling;
      t.sin[p * half + i] = std::sin(angle) * f.attention_scaling;
    }
  return t;
}

void apply_rope(const RopeTable& t, float* x, std::size_t ld, std::size_t tokens, std::size_t heads,
                std::size_t head_dim) {
  const std::size_t half = head_dim / 2;
  for (std::size_t p = 0; p < tokens; ++p) {
    const float* c = t.cos.data() + p * half;
    const float* s = t.sin.data() + p * half;
    for (std::size_t h = 0; h < heads; ++h) {
      float* v = x + p * ld + h * head_dim;
      for (std::size_t i = 0; i < half; ++i) {
        const float a = v[i], b = v[i + half];
        v[i] = a * c[i] - b * s[i];
        v[i + half] = b * c[i] + a * s[i];
      }
    }
  }
}

}  // namespace mcpclass::kernels
