// The peak of each product unit the engine's kernels use, measured on this core rather than taken
// from a table: the clock (a chain of dependent adds, one cycle each), then each instruction's
// throughput per cycle over 12 independent accumulators (AVX2 has 16 registers). The kernel
// rates of bench_kernels are
// quoted against these. Prints one JSON line.
// usage: bench_units [ITERATIONS]
#include <immintrin.h>

#include <boost/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>

using Clock = std::chrono::steady_clock;

namespace {

// Seconds of `call` (which runs `n` steps), best of 5.
template <class Call>
double best_seconds(Call&& call) {
  double best = 1e9;
  for (int i = 0; i < 5; ++i) {
    const auto start = Clock::now();
    call();
    best = std::min(best, std::chrono::duration<double>(Clock::now() - start).count());
  }
  return best;
}

double ghz(long n) {
  const double s = best_seconds([&] {
    long x = 0;
    for (long i = 0; i < n; ++i)
      asm volatile("add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0" : "+r"(x));
  });
  return 4.0 * static_cast<double>(n) / s / 1e9;
}

// Seconds per instruction of `op` over 12 independent accumulators, best of 5 runs of n steps.
// (Each product reads its accumulator or runs on fixed operands the compiler cannot see.)
#define MCPCLASS_UNIT(fn, type, zero, op, isa)                                                  \
  __attribute__((target(isa))) double fn(long n) {                                              \
    double best = 1e9;                                                                          \
    for (int run = 0; run < 5; ++run) {                                                         \
      type a0 = zero, a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;            \
      type a8 = a0, a9 = a0, a10 = a0, a11 = a0;                                                \
      type b = zero, c = zero;                                                                  \
      asm volatile("" : "+v"(b), "+v"(c), "+v"(a0), "+v"(a1), "+v"(a2), "+v"(a3));              \
      asm volatile("" : "+v"(a4), "+v"(a5), "+v"(a6), "+v"(a7), "+v"(a8), "+v"(a9));            \
      asm volatile("" : "+v"(a10), "+v"(a11));                                                  \
      const auto start = Clock::now();                                                          \
      for (long i = 0; i < n; ++i) {                                                            \
        a0 = op(a0, b, c), a1 = op(a1, b, c), a2 = op(a2, b, c), a3 = op(a3, b, c);             \
        a4 = op(a4, b, c), a5 = op(a5, b, c), a6 = op(a6, b, c), a7 = op(a7, b, c);             \
        a8 = op(a8, b, c), a9 = op(a9, b, c), a10 = op(a10, b, c), a11 = op(a11, b, c);         \
        asm volatile("" : "+v"(a0), "+v"(a5), "+v"(a10));                                       \
      }                                                                                         \
      asm volatile("" ::"v"(a0), "v"(a1), "v"(a2), "v"(a3), "v"(a4), "v"(a5), "v"(a6), "v"(a7), \
                   "v"(a8), "v"(a9), "v"(a10), "v"(a11));                                       \
      best = std::min(best, std::chrono::duration<double>(Clock::now() - start).count());       \
    }                                                                                           \
    return best / (12.0 * static_cast<double>(n));                                              \
  }

__attribute__((target("avx2,fma"))) inline __m256 fma256(__m256 a, __m256 b, __m256 c) {
  return _mm256_fmadd_ps(b, c, a);
}
__attribute__((target("avx512f"))) inline __m512 fma512(__m512 a, __m512 b, __m512 c) {
  return _mm512_fmadd_ps(b, c, a);
}
__attribute__((target("avx512f,avx512bf16"))) inline __m512 dpbf16(__m512 a, __m512 b, __m512 c) {
  return _mm512_dpbf16_ps(a, reinterpret_cast<__m512bh>(b), reinterpret_cast<__m512bh>(c));
}
__attribute__((target("avx512f,avx512vnni"))) inline __m512i dpbusd512(__m512i a, __m512i b,
                                                                       __m512i c) {
  return _mm512_dpbusd_epi32(a, b, c);
}
__attribute__((target("avx2"))) inline __m256i maddubs256(__m256i a, __m256i b, __m256i c) {
  return _mm256_add_epi32(a, _mm256_madd_epi16(_mm256_maddubs_epi16(a, c), b));
}

MCPCLASS_UNIT(unit_fma256, __m256, _mm256_setzero_ps(), fma256, "avx2,fma")
MCPCLASS_UNIT(unit_fma512, __m512, _mm512_setzero_ps(), fma512, "avx512f")
MCPCLASS_UNIT(unit_dpbf16, __m512, _mm512_setzero_ps(), dpbf16, "avx512f,avx512bf16")
MCPCLASS_UNIT(unit_dpbusd512, __m512i, _mm512_setzero_si512(), dpbusd512, "avx512f,avx512vnni")
MCPCLASS_UNIT(unit_maddubs256, __m256i, _mm256_setzero_si256(), maddubs256, "avx2")

}  // namespace

int main(int argc, char** argv) {
  const long n = argc > 1 ? std::stol(argv[1]) : 20'000'000;
  const double clock = ghz(n);
  boost::json::object o{{"ghz", clock}};
  // Operations per cycle: a multiply-add counts 2 (int8 and bf16 products likewise).
  const auto put = [&](const char* name, double seconds_per_instruction, double ops) {
    const double per_cycle = 1.0 / (seconds_per_instruction * clock * 1e9);
    o[name] = boost::json::object{{"instructions_per_cycle", per_cycle},
                                  {"ops_per_cycle", per_cycle * ops}};
  };
  __builtin_cpu_init();
  if (__builtin_cpu_supports("fma")) put("f32 avx2 (vfmadd ymm)", unit_fma256(n / 4), 16);
  if (__builtin_cpu_supports("avx2"))
    put("int8 avx2 (vpmaddubsw + vpmaddwd + vpaddd ymm)", unit_maddubs256(n / 4), 64);
  if (__builtin_cpu_supports("avx512f")) put("f32 avx512 (vfmadd zmm)", unit_fma512(n / 4), 32);
  if (__builtin_cpu_supports("avx512bf16"))
    put("bf16 avx512 (vdpbf16ps zmm)", unit_dpbf16(n / 4), 64);
  if (__builtin_cpu_supports("avx512vnni"))
    put("int8 avx512 (vpdpbusd zmm)", unit_dpbusd512(n / 4), 128);
  std::printf("%s\n", boost::json::serialize(o).c_str());
  return 0;
}
