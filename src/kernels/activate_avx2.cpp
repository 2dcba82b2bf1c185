// The activations of the AVX2 sets (activate.hpp), eight lanes at a time in the order of the
// portable lanes, in functions compiled for AVX2 + FMA alone.
#include "kernels/activate.hpp"
#include "kernels/exp_vector.hpp"

#if defined(__x86_64__)

#include "kernels/isa.hpp"

namespace mcpclass::kernels::detail {
MCPCLASS_ISA_BEGIN

namespace {

// |v| with the sign of `sign`.
MCPCLASS_ISA("avx2,fma") inline __m256 copysign8(__m256 v, __m256 sign) {
  const __m256 mask = _mm256_set1_ps(-0.0f);
  return _mm256_or_ps(_mm256_andnot_ps(mask, v), _mm256_and_ps(mask, sign));
}

MCPCLASS_ISA("avx2,fma") inline __m256 gelu8(__m256 x) {
  const __m256 one = _mm256_set1_ps(1.0f);
  const __m256 z =
      _mm256_mul_ps(_mm256_andnot_ps(_mm256_set1_ps(-0.0f), x), _mm256_set1_ps(kSqrtHalf));
  const __m256 t = _mm256_div_ps(one, _mm256_fmadd_ps(_mm256_set1_ps(kErfP), z, one));
  __m256 p = _mm256_fmadd_ps(_mm256_set1_ps(kErfA5), t, _mm256_set1_ps(kErfA4));
  p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(kErfA3));
  p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(kErfA2));
  p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(kErfA1));
  const __m256 e = exp8(_mm256_xor_ps(_mm256_mul_ps(z, z), _mm256_set1_ps(-0.0f)));
  const __m256 erf =
      copysign8(_mm256_fnmadd_ps(_mm256_mul_ps(p, t), e, one), x);  // −(p·t)·e + 1, rounded once
  return _mm256_mul_ps(_mm256_mul_ps(_mm256_set1_ps(0.5f), x), _mm256_add_ps(one, erf));
}

MCPCLASS_ISA("avx2,fma") inline __m256 gelu_tanh8(__m256 x) {
  const __m256 one = _mm256_set1_ps(1.0f);
  const __m256 cubic = _mm256_mul_ps(_mm256_set1_ps(kGeluTanhCubic), _mm256_mul_ps(x, x));
  const __m256 u = _mm256_mul_ps(_mm256_set1_ps(kGeluTanhScale), _mm256_fmadd_ps(cubic, x, x));
  const __m256 e =
      exp8(_mm256_mul_ps(_mm256_set1_ps(-2.0f), _mm256_andnot_ps(_mm256_set1_ps(-0.0f), u)));
  const __m256 tanh = copysign8(_mm256_div_ps(_mm256_sub_ps(one, e), _mm256_add_ps(one, e)), u);
  return _mm256_mul_ps(_mm256_mul_ps(_mm256_set1_ps(0.5f), x), _mm256_add_ps(one, tanh));
}

MCPCLASS_ISA("avx2,fma") inline __m256 silu8(__m256 x) {
  const __m256 one = _mm256_set1_ps(1.0f);
  const __m256 e = exp8(_mm256_or_ps(x, _mm256_set1_ps(-0.0f)));  // exp(−|x|)
  const __m256 numerator =
      _mm256_blendv_ps(one, e, _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_LT_OQ));
  return _mm256_mul_ps(x, _mm256_div_ps(numerator, _mm256_add_ps(one, e)));
}

template <HiddenActivation kA>
MCPCLASS_ISA("avx2,fma")
inline __m256 apply8(__m256 x) {
  if constexpr (kA == HiddenActivation::gelu) return gelu8(x);
  if constexpr (kA == HiddenActivation::gelu_tanh) return gelu_tanh8(x);
  if constexpr (kA == HiddenActivation::silu) return silu8(x);
  return _mm256_max_ps(_mm256_setzero_ps(), x);  // (0 > x) ? 0 : x, as relu_lane
}

template <HiddenActivation kA>
MCPCLASS_ISA("avx2,fma")
void activate_span(float* x, std::size_t n) {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(x + i, apply8<kA>(_mm256_loadu_ps(x + i)));
  for (; i < n; ++i) x[i] = activation_lane(kA, x[i]);
}

template <HiddenActivation kA>
MCPCLASS_ISA("avx2,fma")
void gate_span(const float* in, const float* gate, std::size_t n, float* out) {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(out + i,
                     _mm256_mul_ps(apply8<kA>(_mm256_loadu_ps(in + i)), _mm256_loadu_ps(gate + i)));
  for (; i < n; ++i) out[i] = activation_lane(kA, in[i]) * gate[i];
}

void activate_any(HiddenActivation a, float* x, std::size_t n) {
  with_activation(a, [&](auto kA) { activate_span<kA()>(x, n); });
}

void gate_any(HiddenActivation a, const float* in, const float* gate, std::size_t n, float* out) {
  with_activation(a, [&](auto kA) { gate_span<kA()>(in, gate, n, out); });
}

}  // namespace

ActivationKernel activation_avx2() {
  return {activate_any, gate_any};
}

MCPCLASS_ISA_END
}  // namespace mcpclass::kernels::detail

#else

namespace mcpclass::kernels::detail {
ActivationKernel activation_avx2() {
  return {nullptr, nullptr};
}
}  // namespace mcpclass::kernels::detail

#endif
