// The activations of the AVX-512 sets (activate.hpp): activate_avx2.cpp's lanes sixteen at a
// time, each operation in the order of the portable lanes (the same bits), in functions
// compiled for AVX-512 alone. GELU's division sets its time, and on Zen 5 a 512-bit divide does
// twice the lanes of a 256-bit one in about the same time (BERT-base's 128 × 3072 GELU outputs,
// one thread: 116 µs on 8 lanes, 61 µs on 16; int8 at 128 tokens spent 6.4% of its time there).
#include "kernels/activate.hpp"
#include "kernels/exp_vector.hpp"

#if defined(__x86_64__)

#include "kernels/isa.hpp"

#include <cstdint>

namespace mcpclass::kernels::detail {
MCPCLASS_ISA_BEGIN

namespace {

#define MCPCLASS_AVX512 "avx2,fma,avx512f,avx512bw,avx512vl"

// The float bit operations on integer lanes: their `_ps` forms need AVX-512 DQ, which the
// avx512 set does not ask for.
MCPCLASS_ISA(MCPCLASS_AVX512) inline __m512 or16(__m512 a, __m512 b) {
  return _mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(a), _mm512_castps_si512(b)));
}
MCPCLASS_ISA(MCPCLASS_AVX512) inline __m512 xor16(__m512 a, __m512 b) {
  return _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(a), _mm512_castps_si512(b)));
}
// |v|, and |v| with the sign of `sign`.
MCPCLASS_ISA(MCPCLASS_AVX512) inline __m512 abs16(__m512 v) {
  return _mm512_castsi512_ps(
      _mm512_andnot_si512(_mm512_set1_epi32(INT32_MIN), _mm512_castps_si512(v)));
}
MCPCLASS_ISA(MCPCLASS_AVX512) inline __m512 copysign16(__m512 v, __m512 sign) {
  const __m512i mask = _mm512_set1_epi32(INT32_MIN);
  return or16(abs16(v), _mm512_castsi512_ps(_mm512_and_si512(mask, _mm512_castps_si512(sign))));
}

MCPCLASS_ISA(MCPCLASS_AVX512) inline __m512 gelu16(__m512 x) {
  const __m512 one = _mm512_set1_ps(1.0f);
  const __m512 z = _mm512_mul_ps(abs16(x), _mm512_set1_ps(kSqrtHalf));
  const __m512 t = _mm512_div_ps(one, _mm512_fmadd_ps(_mm512_set1_ps(kErfP), z, one));
  __m512 p = _mm512_fmadd_ps(_mm512_set1_ps(kErfA5), t, _mm512_set1_ps(kErfA4));
  p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(kErfA3));
  p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(kErfA2));
  p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(kErfA1));
  const __m512 e = exp16(xor16(_mm512_mul_ps(z, z), _mm512_set1_ps(-0.0f)));
  const __m512 erf =
      copysign16(_mm512_fnmadd_ps(_mm512_mul_ps(p, t), e, one), x);  // −(p·t)·e + 1, rounded once
  return _mm512_mul_ps(_mm512_mul_ps(_mm512_set1_ps(0.5f), x), _mm512_add_ps(one, erf));
}

MCPCLASS_ISA(MCPCLASS_AVX512) inline __m512 gelu_tanh16(__m512 x) {
  const __m512 one = _mm512_set1_ps(1.0f);
  const __m512 cubic = _mm512_mul_ps(_mm512_set1_ps(kGeluTanhCubic), _mm512_mul_ps(x, x));
  const __m512 u = _mm512_mul_ps(_mm512_set1_ps(kGeluTanhScale), _mm512_fmadd_ps(cubic, x, x));
  const __m512 e = exp16(_mm512_mul_ps(_mm512_set1_ps(-2.0f), abs16(u)));
  const __m512 tanh = copysign16(_mm512_div_ps(_mm512_sub_ps(one, e), _mm512_add_ps(one, e)), u);
  return _mm512_mul_ps(_mm512_mul_ps(_mm512_set1_ps(0.5f), x), _mm512_add_ps(one, tanh));
}

MCPCLASS_ISA(MCPCLASS_AVX512) inline __m512 silu16(__m512 x) {
  const __m512 one = _mm512_set1_ps(1.0f);
  const __m512 e = exp16(or16(x, _mm512_set1_ps(-0.0f)));  // exp(−|x|)
  const __m512 numerator =
      _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_LT_OQ), one, e);
  return _mm512_mul_ps(x, _mm512_div_ps(numerator, _mm512_add_ps(one, e)));
}

template <HiddenActivation kA>
MCPCLASS_ISA(MCPCLASS_AVX512)
inline __m512 apply16(__m512 x) {
  if constexpr (kA == HiddenActivation::gelu) return gelu16(x);
  if constexpr (kA == HiddenActivation::gelu_tanh) return gelu_tanh16(x);
  if constexpr (kA == HiddenActivation::silu) return silu16(x);
  return _mm512_max_ps(_mm512_setzero_ps(), x);  // (0 > x) ? 0 : x, as relu_lane
}

// The last n % 16 values: the same lanes, masked.
MCPCLASS_ISA(MCPCLASS_AVX512) inline __mmask16 tail_mask(std::size_t n) {
  return static_cast<__mmask16>((1u << n) - 1u);
}

template <HiddenActivation kA>
MCPCLASS_ISA(MCPCLASS_AVX512)
void activate_span(float* x, std::size_t n) {
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) _mm512_storeu_ps(x + i, apply16<kA>(_mm512_loadu_ps(x + i)));
  if (i < n) {
    const __mmask16 m = tail_mask(n - i);
    _mm512_mask_storeu_ps(x + i, m, apply16<kA>(_mm512_maskz_loadu_ps(m, x + i)));
  }
}

template <HiddenActivation kA>
MCPCLASS_ISA(MCPCLASS_AVX512)
void gate_span(const float* in, const float* gate, std::size_t n, float* out) {
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm512_storeu_ps(
        out + i, _mm512_mul_ps(apply16<kA>(_mm512_loadu_ps(in + i)), _mm512_loadu_ps(gate + i)));
  if (i < n) {
    const __mmask16 m = tail_mask(n - i);
    _mm512_mask_storeu_ps(out + i, m,
                          _mm512_mul_ps(apply16<kA>(_mm512_maskz_loadu_ps(m, in + i)),
                                        _mm512_maskz_loadu_ps(m, gate + i)));
  }
}

#undef MCPCLASS_AVX512

void activate_any(HiddenActivation a, float* x, std::size_t n) {
  with_activation(a, [&](auto kA) { activate_span<kA()>(x, n); });
}

void gate_any(HiddenActivation a, const float* in, const float* gate, std::size_t n, float* out) {
  with_activation(a, [&](auto kA) { gate_span<kA()>(in, gate, n, out); });
}

}  // namespace

ActivationKernel activation_avx512() {
  return {activate_any, gate_any};
}

MCPCLASS_ISA_END
}  // namespace mcpclass::kernels::detail

#else

namespace mcpclass::kernels::detail {
ActivationKernel activation_avx512() {
  return {nullptr, nullptr};
}
}  // namespace mcpclass::kernels::detail

#endif
