// The dynamic int8 products (kernels/qgemm.hpp): every kernel set gives the same bytes and bits
// as the portable one, a row's result is its own whatever rows share the product, the error
// against the float product stays within the quantization's bound, and the edge rows (all
// zeros, NaN, infinity) and weights (non-finite) behave as documented.
#ifdef MCPCLASS_WITH_LEARNED

#include "kernel_test_values.hpp"
#include "kernels/qgemm.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <stdexcept>
#include <vector>

using namespace mcpclass::kernels;
using kernel_test::normal;
using kernel_test::same_bits;

namespace {

// The kernel sets this CPU runs, lowest first.
std::vector<KernelSet> runnable_sets() {
  return runnable_kernel_sets(detect_cpu_features());
}

struct Quantized {
  std::vector<std::int8_t> q;
  std::vector<float> scale;
};

Quantized quantize(KernelSet set, const std::vector<float>& x, std::size_t rows, std::size_t in) {
  Quantized out{std::vector<std::int8_t>(rows * quantized_depth(in)), std::vector<float>(rows)};
  quantize_rows(set, x.data(), rows, in, out.q.data(), out.scale.data());
  return out;
}

std::vector<float> product(KernelSet set, const QuantizedWeights& w, const float* bias,
                           const Quantized& x, std::size_t first_row, std::size_t rows) {
  std::vector<float> y(rows * w.out);
  qgemm(set, w, bias, 0, qpanels_of(w.out), x.q.data() + first_row * quantized_depth(w.in),
        x.scale.data() + first_row, rows, y.data());
  return y;
}

}  // namespace

TEST_CASE("int8 product: every kernel set gives the portable bits, each row its own result") {
  std::mt19937 rng(7);
  // Inputs not a multiple of the 4-byte group nor of the 32-value quantization step, outputs
  // below, at and past a 16-output panel, rows past one 4-row tile (9 = 4 + 4 + 1).
  for (const auto& [in, out] :
       {std::pair<std::size_t, std::size_t>{5, 37}, {64, 16}, {33, 3}, {768, 48}, {70, 21}}) {
    CAPTURE(in);
    CAPTURE(out);
    const std::size_t rows = 9;
    const auto weight = normal(out * in, 0.05f, rng), bias = normal(out, 0.1f, rng),
               x = normal(rows * in, 1.0f, rng);
    const auto w = quantize_weights(weight, in, out);
    const auto reference = quantize(KernelSet::portable, x, rows, in);
    const auto want = product(KernelSet::portable, w, bias.data(), reference, 0, rows);
    // Against the float product: each value of x and W is off by at most half a step, so
    // |Δy| ≤ Σₖ (|x|·sw/2 + |W|·sx/2 + sx·sw/4) (the sums themselves are exact).
    for (std::size_t r = 0; r < rows; ++r)
      for (std::size_t o = 0; o < out; ++o) {
        double exact = bias[o], bound = 1e-5;
        for (std::size_t k = 0; k < in; ++k) {
          const double xv = x[r * in + k], wv = weight[o * in + k];
          exact += xv * wv;
          bound += std::abs(xv) * w.scale[o] / 2 + std::abs(wv) * reference.scale[r] / 2 +
                   w.scale[o] * reference.scale[r] / 4;
        }
        CHECK(std::abs(want[r * out + o] - exact) <= bound);
      }
    for (const auto set : runnable_sets()) {
      CAPTURE(std::string(name(set)));
      const auto q = quantize(set, x, rows, in);
      CHECK(q.q == reference.q);
      CHECK(std::memcmp(q.scale.data(), reference.scale.data(), rows * sizeof(float)) == 0);
      const auto all = product(set, w, bias.data(), q, 0, rows);
      CHECK(std::memcmp(all.data(), want.data(), all.size() * sizeof(float)) == 0);
      // Rows 3..8 alone (other tile boundaries) give the same bits.
      const auto tail = product(set, w, bias.data(), q, 3, 6);
      CHECK(std::memcmp(tail.data(), want.data() + 3 * out, tail.size() * sizeof(float)) == 0);
      // The panels in two calls, as two threads share them.
      std::vector<float> split(rows * out);
      const std::size_t half = qpanels_of(out) / 2;
      qgemm(set, w, bias.data(), 0, half, q.q.data(), q.scale.data(), rows, split.data());
      qgemm(set, w, bias.data(), half, qpanels_of(out), q.q.data(), q.scale.data(), rows,
            split.data());
      CHECK(std::memcmp(split.data(), want.data(), split.size() * sizeof(float)) == 0);
    }
  }
}

TEST_CASE("int8 product: zero, NaN and infinite rows, non-finite and zero weights") {
  std::mt19937 rng(11);
  const std::size_t in = 40, out = 18, rows = 4;
  auto weight = normal(out * in, 0.05f, rng);
  std::fill_n(weight.begin() + 2 * in, in, 0.0f);  // output 2: all-zero weights
  const auto bias = normal(out, 0.1f, rng);
  auto x = normal(rows * in, 1.0f, rng);
  std::fill_n(x.begin(), in, 0.0f);                          // row 0: zeros
  x[1 * in + 7] = std::numeric_limits<float>::quiet_NaN();   // row 1: a NaN
  x[2 * in + 39] = -std::numeric_limits<float>::infinity();  // row 2: an infinity
  const auto w = quantize_weights(weight, in, out);
  CHECK(w.scale[2] == 0.0f);
  for (const auto set : runnable_sets()) {
    CAPTURE(std::string(name(set)));
    const auto q = quantize(set, x, rows, in);
    CHECK(q.scale[0] == 0.0f);
    CHECK(std::isnan(q.scale[1]));
    CHECK(std::isnan(q.scale[2]));
    CHECK(q.scale[3] > 0.0f);
    const auto y = product(set, w, bias.data(), q, 0, rows);
    for (std::size_t o = 0; o < out; ++o) {
      CHECK(y[o] == bias[o]);  // a zero row gives the bias
      CHECK(std::isnan(y[out + o]));
      CHECK(std::isnan(y[2 * out + o]));
    }
    CHECK(y[3 * out + 2] == bias[2]);  // zero weights give the bias
  }
  weight[5 * in + 3] = std::numeric_limits<float>::infinity();
  CHECK_THROWS_WITH_AS(quantize_weights(weight, in, out),
                       doctest::Contains("output 5 has a weight that is not finite"),
                       std::invalid_argument);
}

TEST_CASE("kernel sets: chosen per model, capped by the setting and MCPCLASS_KERNELS") {
  CpuFeatures none;
  CHECK(best_kernel_set(none) == KernelSet::portable);
  CHECK(missing_features(none, KernelSet::avx2) == "avx2 fma");
  CHECK_THROWS_WITH_AS(choose_kernel_set(none, "avx2"),
                       doctest::Contains("kernel set avx2, which needs avx2 fma"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(choose_kernel_set(none, "avx9"),
                       "unknown kernel set \"avx9\" (known: portable, avx2, avx2_vnni, avx512, "
                       "avx512_vnni, avx512_bf16, amx)",
                       std::invalid_argument);
  CpuFeatures avx2;
  avx2.avx2 = avx2.fma = true;
  CHECK(describe(avx2) == "avx2 fma");
  // A forced run's MCPCLASS_KERNELS may name a set these made-up CPUs lack.
  const bool uncapped = std::getenv("MCPCLASS_KERNELS") == nullptr;
  if (uncapped) {
    CHECK(choose_kernel_set(avx2, "portable") == KernelSet::portable);
    CHECK(choose_kernel_set(avx2, "") == KernelSet::avx2);
  }
  // amx needs the tiles on top of every avx512_bf16 feature.
  CpuFeatures bf16 = avx2;
  bf16.avx512f = bf16.avx512bw = bf16.avx512vl = bf16.avx512_vnni = bf16.avx512_bf16 = true;
  CHECK(best_kernel_set(bf16) == KernelSet::avx512_bf16);
  CHECK(missing_features(bf16, KernelSet::amx) == "amx_tile amx_int8 amx_bf16");
  CpuFeatures amx = bf16;
  amx.amx_tile = amx.amx_int8 = amx.amx_bf16 = true;
  CHECK(best_kernel_set(amx) == KernelSet::amx);
  CHECK(parse_kernel_set("amx") == KernelSet::amx);
  if (uncapped) CHECK(choose_kernel_set(amx, "avx512_vnni") == KernelSet::avx512_vnni);
}

#endif  // MCPCLASS_WITH_LEARNED
