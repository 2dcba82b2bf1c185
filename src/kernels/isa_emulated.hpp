// Internal, tests only (kernels/isa.hpp): SIMDe's portable intrinsics under their native names,
// plus the few the kernels use that SIMDe 0.7.4 (Debian 12) lacks, written lane by lane from
// Intel's definitions.
#pragma once

#define SIMDE_ENABLE_NATIVE_ALIASES
#include <simde/x86/avx2.h>
#include <simde/x86/avx512.h>
#include <simde/x86/fma.h>

#include "kernels/bf16gemm.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>

using __mmask16 = simde__mmask16;
#ifndef _MM_FROUND_TO_NEAREST_INT
#define _MM_FROUND_TO_NEAREST_INT SIMDE_MM_FROUND_TO_NEAREST_INT
#endif
#ifndef _MM_FROUND_NO_EXC
#define _MM_FROUND_NO_EXC SIMDE_MM_FROUND_NO_EXC
#endif

// SIMDe's fused multiply-adds without the FMA unit are a product then a sum, rounded twice; the
// instruction rounds once, and the kernels' bits depend on it (kernels/packed_product.hpp).
#undef _mm256_fmadd_ps
#undef _mm512_fmadd_ps
#undef _mm256_fnmadd_ps
#undef _mm512_fnmadd_ps
#undef _mm256_fmadd_pd
template <class Vector>
inline Vector fmadd_lanes(Vector a, Vector b, Vector c) {
  constexpr std::size_t kLanes = sizeof(Vector) / sizeof(float);
  float x[kLanes], y[kLanes], z[kLanes];
  std::memcpy(x, &a, sizeof a);
  std::memcpy(y, &b, sizeof b);
  std::memcpy(z, &c, sizeof c);
  for (std::size_t i = 0; i < kLanes; ++i) z[i] = std::fma(x[i], y[i], z[i]);
  std::memcpy(&c, z, sizeof c);
  return c;
}
inline __m256 _mm256_fmadd_ps(__m256 a, __m256 b, __m256 c) {
  return fmadd_lanes(a, b, c);
}
inline __m512 _mm512_fmadd_ps(__m512 a, __m512 b, __m512 c) {
  return fmadd_lanes(a, b, c);
}
inline __m256d _mm256_fmadd_pd(__m256d a, __m256d b, __m256d c) {
  double x[4], y[4], z[4];
  std::memcpy(x, &a, sizeof a);
  std::memcpy(y, &b, sizeof b);
  std::memcpy(z, &c, sizeof c);
  for (std::size_t i = 0; i < 4; ++i) z[i] = std::fma(x[i], y[i], z[i]);
  std::memcpy(&c, z, sizeof c);
  return c;
}
/// −(a·b) + c, rounded once (negating a is exact).
inline __m256 _mm256_fnmadd_ps(__m256 a, __m256 b, __m256 c) {
  return fmadd_lanes(simde_mm256_xor_ps(a, simde_mm256_set1_ps(-0.0f)), b, c);
}
inline __m512 _mm512_fnmadd_ps(__m512 a, __m512 b, __m512 c) {
  return fmadd_lanes(simde_mm512_xor_ps(a, simde_mm512_set1_ps(-0.0f)), b, c);
}

/// vcvtps2dq on 512 bits (SIMDe lacks it): to the nearest integer, ties to even, as the default
/// rounding mode does.
inline __m512i _mm512_cvtps_epi32(__m512 v) {
  float in[16];
  std::int32_t out[16];
  std::memcpy(in, &v, sizeof in);
  for (int i = 0; i < 16; ++i) out[i] = static_cast<std::int32_t>(std::nearbyint(in[i]));
  __m512i r;
  std::memcpy(&r, out, sizeof r);
  return r;
}

/// AVX-VNNI's vpdpbusd (VEX encoding): the same sums as AVX512-VL's.
inline __m256i _mm256_dpbusd_avx_epi32(__m256i src, __m256i a, __m256i b) {
  return simde_mm256_dpbusd_epi32(src, a, b);
}

inline void _mm512_mask_storeu_ps(void* p, __mmask16 mask, __m512 v) {
  float lanes[16];
  std::memcpy(lanes, &v, sizeof lanes);
  for (int i = 0; i < 16; ++i)
    if ((mask >> i) & 1) std::memcpy(static_cast<float*>(p) + i, lanes + i, sizeof(float));
}

inline __m512 _mm512_maskz_loadu_ps(__mmask16 mask, const void* p) {
  float lanes[16];
  for (int i = 0; i < 16; ++i) {
    lanes[i] = 0.0f;
    if ((mask >> i) & 1) std::memcpy(lanes + i, static_cast<const float*>(p) + i, sizeof(float));
  }
  __m512 r;
  std::memcpy(&r, lanes, sizeof r);
  return r;
}

inline __m512 _mm512_maskz_cvtepi32_ps(__mmask16 mask, __m512i v) {
  std::int32_t in[16];
  float out[16];
  std::memcpy(in, &v, sizeof in);
  for (int i = 0; i < 16; ++i) out[i] = ((mask >> i) & 1) ? static_cast<float>(in[i]) : 0.0f;
  __m512 r;
  std::memcpy(&r, out, sizeof r);
  return r;
}

inline __m512i _mm512_maskz_slli_epi32(__mmask16 mask, __m512i v, unsigned int count) {
  std::uint32_t lanes[16];
  std::memcpy(lanes, &v, sizeof lanes);
  for (int i = 0; i < 16; ++i) lanes[i] = ((mask >> i) & 1) && count < 32 ? lanes[i] << count : 0u;
  __m512i r;
  std::memcpy(&r, lanes, sizeof r);
  return r;
}

// vdpbf16ps as Intel defines it (bf16gemm.hpp: the odd input of each pair, then the even one,
// each rounded once and flushed); SIMDe sums the two products in another order.
#undef _mm512_dpbf16_ps
inline __m512 _mm512_dpbf16_ps(__m512 src, __m512bh a, __m512bh b) {
  float sum[16];
  std::uint16_t x[32], w[32];
  std::memcpy(sum, &src, sizeof sum);
  std::memcpy(x, &a, sizeof x);
  std::memcpy(w, &b, sizeof w);
  using mcpclass::kernels::from_bf16;
  for (int i = 0; i < 16; ++i)
    sum[i] =
        mcpclass::kernels::detail::bf16_pair_step(sum[i], from_bf16(x[2 * i]), from_bf16(w[2 * i]),
                                                  from_bf16(x[2 * i + 1]), from_bf16(w[2 * i + 1]));
  std::memcpy(&src, sum, sizeof src);
  return src;
}

// AMX, which SIMDe lacks: the calling thread's eight tiles as plain memory (an emulated
// register file, one per thread as the hardware's), the tile products from Intel's definitions.
// tdpbf16ps sums each pair in vdpbf16ps's order here, so the emulated amx tiles give the portable
// bits; the hardware's unit orders its additions its own way (bf16gemm_amx.cpp).
namespace mcpclass::kernels::detail::emulated_amx {

struct Tiles {
  std::uint16_t colsb[8] = {};
  std::uint8_t rows[8] = {};
  unsigned char data[8][16][64] = {};
};
inline thread_local Tiles tiles;

inline void loadconfig(const void* config) {
  const auto* c = static_cast<const unsigned char*>(config);
  tiles = Tiles{};
  for (int t = 0; t < 8; ++t) {
    tiles.colsb[t] = static_cast<std::uint16_t>(c[16 + 2 * t] | (c[17 + 2 * t] << 8));
    tiles.rows[t] = c[48 + t];
  }
}
inline void zero(int t) {
  std::memset(tiles.data[t], 0, sizeof tiles.data[t]);
}
inline void loadd(int t, const void* base, long stride) {
  for (int r = 0; r < tiles.rows[t]; ++r)
    std::memcpy(tiles.data[t][r], static_cast<const unsigned char*>(base) + r * stride,
                tiles.colsb[t]);
}
inline void stored(int t, void* base, long stride) {
  for (int r = 0; r < tiles.rows[t]; ++r)
    std::memcpy(static_cast<unsigned char*>(base) + r * stride, tiles.data[t][r], tiles.colsb[t]);
}
inline void dpbssd(int c, int a, int b) {
  for (int m = 0; m < tiles.rows[c]; ++m)
    for (int n = 0; n < tiles.colsb[c] / 4; ++n) {
      std::int32_t sum;
      std::memcpy(&sum, tiles.data[c][m] + 4 * n, sizeof sum);
      for (int k = 0; k < tiles.colsb[a] / 4; ++k)
        for (int i = 0; i < 4; ++i)
          sum += std::int32_t{static_cast<std::int8_t>(tiles.data[a][m][4 * k + i])} *
                 std::int32_t{static_cast<std::int8_t>(tiles.data[b][k][4 * n + i])};
      std::memcpy(tiles.data[c][m] + 4 * n, &sum, sizeof sum);
    }
}
inline void dpbf16ps(int c, int a, int b) {
  using mcpclass::kernels::from_bf16;
  const auto bf16 = [](const unsigned char* p) {
    std::uint16_t v;
    std::memcpy(&v, p, sizeof v);
    return from_bf16(v);
  };
  for (int m = 0; m < tiles.rows[c]; ++m)
    for (int n = 0; n < tiles.colsb[c] / 4; ++n) {
      float sum;
      std::memcpy(&sum, tiles.data[c][m] + 4 * n, sizeof sum);
      for (int k = 0; k < tiles.colsb[a] / 4; ++k) {
        const unsigned char *x = tiles.data[a][m] + 4 * k, *w = tiles.data[b][k] + 4 * n;
        sum = bf16_pair_step(sum, bf16(x), bf16(w), bf16(x + 2), bf16(w + 2));
      }
      std::memcpy(tiles.data[c][m] + 4 * n, &sum, sizeof sum);
    }
}

}  // namespace mcpclass::kernels::detail::emulated_amx

#define _tile_loadconfig(config) ::mcpclass::kernels::detail::emulated_amx::loadconfig(config)
#define _tile_zero(t) ::mcpclass::kernels::detail::emulated_amx::zero(t)
#define _tile_loadd(t, base, stride) \
  ::mcpclass::kernels::detail::emulated_amx::loadd(t, base, stride)
#define _tile_stored(t, base, stride) \
  ::mcpclass::kernels::detail::emulated_amx::stored(t, base, stride)
#define _tile_dpbssd(c, a, b) ::mcpclass::kernels::detail::emulated_amx::dpbssd(c, a, b)
#define _tile_dpbf16ps(c, a, b) ::mcpclass::kernels::detail::emulated_amx::dpbf16ps(c, a, b)
#define _tile_release() ((void)0)
