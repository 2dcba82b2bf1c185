// Internal: exp_lane.hpp's polynomial on vectors of lanes, each operation in the order
// exp_lane() rounds it, for the softmax and the activations of the vector sets: one definition
// (MCPCLASS_EXP_POLYNOMIAL) made for 8 lanes on AVX2 + FMA and for 16 on AVX-512.
#pragma once

#include "kernels/exp_lane.hpp"

#if defined(__x86_64__)

#include "kernels/isa.hpp"

/// Defines `NAME(x)`: exp(x) for x ≤ 0 in each lane of VEC, with the intrinsics PFX_* (PFX
/// `_mm256` or `_mm512`, BITS its width), ROUND(v) rounding to the nearest integer, compiled for
/// FEATURES.
#define MCPCLASS_EXP_POLYNOMIAL(NAME, VEC, VECI, PFX, BITS, ROUND, FEATURES)                   \
  MCPCLASS_ISA(FEATURES) inline VEC NAME(VEC x) {                                              \
    x = PFX##_max_ps(x, PFX##_set1_ps(kExpLowest));                                            \
    const VEC n = ROUND(PFX##_mul_ps(x, PFX##_set1_ps(kLog2e)));                               \
    VEC r = PFX##_fmadd_ps(n, PFX##_set1_ps(-kLn2Hi), x);                                      \
    r = PFX##_fmadd_ps(n, PFX##_set1_ps(-kLn2Lo), r);                                          \
    VEC p = PFX##_set1_ps(kExpP0);                                                             \
    p = PFX##_fmadd_ps(p, r, PFX##_set1_ps(kExpP1));                                           \
    p = PFX##_fmadd_ps(p, r, PFX##_set1_ps(kExpP2));                                           \
    p = PFX##_fmadd_ps(p, r, PFX##_set1_ps(kExpP3));                                           \
    p = PFX##_fmadd_ps(p, r, PFX##_set1_ps(kExpP4));                                           \
    p = PFX##_fmadd_ps(p, r, PFX##_set1_ps(kExpP5));                                           \
    const VEC y = PFX##_add_ps(PFX##_fmadd_ps(p, PFX##_mul_ps(r, r), r), PFX##_set1_ps(1.0f)); \
    const VECI bits =                                                                          \
        PFX##_slli_epi32(PFX##_add_epi32(PFX##_cvtps_epi32(n), PFX##_set1_epi32(127)), 23);    \
    return PFX##_mul_ps(y, PFX##_castsi##BITS##_ps(bits));                                     \
  }

namespace mcpclass::kernels::detail {
MCPCLASS_ISA_BEGIN

/// The nearest integer of each lane: 8 and 16 lanes.
MCPCLASS_ISA("avx2,fma") inline __m256 round8(__m256 v) {
  return _mm256_round_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}
MCPCLASS_ISA("avx2,fma,avx512f,avx512bw,avx512vl") inline __m512 round16(__m512 v) {
  return _mm512_roundscale_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}

/// exp8(x) and exp16(x): exp(x) for x ≤ 0 in each lane.
MCPCLASS_EXP_POLYNOMIAL(exp8, __m256, __m256i, _mm256, 256, round8, "avx2,fma")
MCPCLASS_EXP_POLYNOMIAL(exp16, __m512, __m512i, _mm512, 512, round16,
                        "avx2,fma,avx512f,avx512bw,avx512vl")

MCPCLASS_ISA_END
}  // namespace mcpclass::kernels::detail

#undef MCPCLASS_EXP_POLYNOMIAL

#endif
