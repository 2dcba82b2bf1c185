// Internal: exp_lane.hpp's polynomial sixteen lanes at a time on AVX-512, each operation in the
// order exp_lane() rounds it (as exp_avx2.hpp's eight), for the AVX-512 sets' activations.
#pragma once

#include "kernels/exp_lane.hpp"

#if defined(__x86_64__)

#include "kernels/isa.hpp"

namespace mcpclass::kernels::detail {
MCPCLASS_ISA_BEGIN

/// exp(x) for x ≤ 0 in each lane.
MCPCLASS_ISA("avx2,fma,avx512f,avx512bw,avx512vl") inline __m512 exp16(__m512 x) {
  x = _mm512_max_ps(x, _mm512_set1_ps(kExpLowest));
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(kLog2e)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fmadd_ps(n, _mm512_set1_ps(-kLn2Hi), x);
  r = _mm512_fmadd_ps(n, _mm512_set1_ps(-kLn2Lo), r);
  __m512 p = _mm512_set1_ps(kExpP0);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kExpP1));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kExpP2));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kExpP3));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kExpP4));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kExpP5));
  const __m512 y = _mm512_add_ps(_mm512_fmadd_ps(p, _mm512_mul_ps(r, r), r), _mm512_set1_ps(1.0f));
  const __m512i bits =
      _mm512_slli_epi32(_mm512_add_epi32(_mm512_cvtps_epi32(n), _mm512_set1_epi32(127)), 23);
  return _mm512_mul_ps(y, _mm512_castsi512_ps(bits));
}

MCPCLASS_ISA_END
}  // namespace mcpclass::kernels::detail

#endif
