// Internal: the activation functions the native encoders compute (their names in a config:
// architectures/common/activations.hpp), by polynomials every kernel set computes the same way
// (one file per instruction set: activate.cpp the portable lanes and the dispatch,
// activate_avx2.cpp eight lanes), so every set gives the same bits and each value's result
// depends on that value alone.
//
// GELU is 0.5 · x · (1 + erf(x / √2)) with erf by Abramowitz & Stegun 7.1.26 (|error| ≤ 1.5e-7)
// and exp by exp_lane.hpp; the tanh GELU takes tanh(u) as (1 − e) / (1 + e), e = exp(−2|u|);
// SiLU (Qwen3's MLP) is x · sigmoid(x) with e = exp(−|x|), so exp never overflows.
// Measured on the 2-core AVX2 EPYC against erf and tanh in double, every 1/8192 over [−10, 10]:
// |error| ≤ 1.8e-7 · max(1, |x|) (GELU) and 1.3e-7 · max(1, |x|) (tanh GELU); one BERT-base FFN
// activation of 128 tokens (128 × 3072 values, 1 thread) in 0.40 ms, where oneDNN's eltwise kernel,
// which this replaces, took 0.5 ms. Owning the function lets a product apply it to its own outputs
// while they are in cache (dense_rows.hpp, linear()'s `activation`).
#pragma once

#include "kernels/cpu_features.hpp"
#include "kernels/exp_lane.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <type_traits>

namespace mcpclass::kernels {

enum class HiddenActivation { gelu, gelu_tanh, relu, silu };

/// Columns [first, last) of `rows` rows of x (`ld` apart) ← a(x), on the calling thread alone.
/// Thread-safety: pure.
void activate_columns(KernelSet set, HiddenActivation a, float* x, std::size_t rows, std::size_t ld,
                      std::size_t first, std::size_t last);

/// The gated linear unit of ModernBERT's MLP (GeGLU for a GELU): each row of `wide` is
/// [input | gate], m values each, and gated[r][j] ← a(input[r][j]) · gate[r][j], rows shared by
/// the calling thread's OpenMP team. Thread-safety: pure.
void gated_activate(KernelSet set, HiddenActivation a, const float* wide, std::size_t rows,
                    std::size_t m, float* gated);

namespace detail {

inline constexpr float kSqrtHalf = 0.70710678118654752f;
inline constexpr float kErfP = 0.3275911f;
inline constexpr float kErfA1 = 0.254829592f, kErfA2 = -0.284496736f, kErfA3 = 1.421413741f,
                       kErfA4 = -1.453152027f, kErfA5 = 1.061405429f;
inline constexpr float kGeluTanhScale = 0.79788456080286536f;  // √(2/π)
inline constexpr float kGeluTanhCubic = 0.044715f;

/// One lane of each activation: the portable set and the vector sets' tails, each operation
/// rounded once in the order the vector code uses.
inline float gelu_lane(float x) {
  const float z = std::fabs(x) * kSqrtHalf;
  const float t = 1.0f / std::fma(kErfP, z, 1.0f);
  float p = std::fma(kErfA5, t, kErfA4);
  p = std::fma(p, t, kErfA3);
  p = std::fma(p, t, kErfA2);
  p = std::fma(p, t, kErfA1);
  const float erf = std::copysign(std::fma(-(p * t), exp_lane(-(z * z)), 1.0f), x);
  return (0.5f * x) * (1.0f + erf);
}
inline float gelu_tanh_lane(float x) {
  const float u = kGeluTanhScale * std::fma(kGeluTanhCubic * (x * x), x, x);
  const float e = exp_lane(-2.0f * std::fabs(u));
  const float tanh = std::copysign((1.0f - e) / (1.0f + e), u);
  return (0.5f * x) * (1.0f + tanh);
}
inline float silu_lane(float x) {
  const float e = exp_lane(-std::fabs(x));
  const float sigmoid = (x >= 0.0f ? 1.0f : e) / (1.0f + e);
  return x * sigmoid;
}
inline float relu_lane(float x) {
  return 0.0f > x ? 0.0f : x;  // a NaN stays NaN, as vmaxps(0, x) keeps its second operand
}
inline float activation_lane(HiddenActivation a, float x) {
  switch (a) {
    case HiddenActivation::gelu:
      return gelu_lane(x);
    case HiddenActivation::gelu_tanh:
      return gelu_tanh_lane(x);
    case HiddenActivation::silu:
      return silu_lane(x);
    case HiddenActivation::relu:
      break;
  }
  return relu_lane(x);
}

/// Calls f(std::integral_constant<HiddenActivation, a>{}): the one dispatch of a run-time
/// activation to code compiled for it.
template <class F>
void with_activation(HiddenActivation a, F&& f) {
  switch (a) {
    case HiddenActivation::gelu:
      return f(std::integral_constant<HiddenActivation, HiddenActivation::gelu>{});
    case HiddenActivation::gelu_tanh:
      return f(std::integral_constant<HiddenActivation, HiddenActivation::gelu_tanh>{});
    case HiddenActivation::silu:
      return f(std::integral_constant<HiddenActivation, HiddenActivation::silu>{});
    case HiddenActivation::relu:
      break;
  }
  f(std::integral_constant<HiddenActivation, HiddenActivation::relu>{});
}

/// One kernel set's activation of x[0, n) in place, and its gated form out[j] ← a(in[j]) · gate[j].
using ActivateSpan = void (*)(HiddenActivation a, float* x, std::size_t n);
using GateSpan = void (*)(HiddenActivation a, const float* in, const float* gate, std::size_t n,
                          float* out);
struct ActivationKernel {
  ActivateSpan activate;
  GateSpan gate;
};
ActivationKernel activation_avx2();
ActivationKernel activation_avx512();

}  // namespace detail

}  // namespace mcpclass::kernels
