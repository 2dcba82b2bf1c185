// The bfloat16 products (kernels/bf16gemm.hpp): rounding to bfloat16 as the format defines it,
// sums within float32's error of the exact products of the rounded values, a row's result its
// own whatever rows share the product, and every kernel set that has a bf16 tile against the
// portable one.
#ifdef MCPCLASS_WITH_LEARNED

#include "kernel_test_values.hpp"
#include "kernels/bf16gemm.hpp"

#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

using namespace mcpclass::kernels;
using kernel_test::normal;
using kernel_test::same_bits;

namespace {

std::vector<float> product(KernelSet set, const Bf16Weights& w, const std::vector<float>& bias,
                           const std::vector<float>& x, std::size_t rows) {
  std::vector<std::uint16_t> xb(rows * bf16_depth(w.in));
  bf16_rows(set, x.data(), rows, w.in, xb.data());
  std::vector<float> y(rows * w.out, std::numeric_limits<float>::quiet_NaN());
  bf16gemm(set, w, bias.data(), 0, bpanels_of(w.out), xb.data(), rows, y.data());
  return y;
}

}  // namespace

TEST_CASE("bf16: values round to nearest even, subnormals to zero, NaN and infinities kept") {
  CHECK(to_bf16(1.0f) == 0x3f80);
  CHECK(from_bf16(0x3f80) == 1.0f);
  CHECK(to_bf16(1.0f + 0x1p-8f) == 0x3f80);             // a tie: to the even neighbour, 1
  CHECK(to_bf16(1.0f + 3 * 0x1p-8f) == 0x3f82);         // a tie: to the even neighbour, up
  CHECK(to_bf16(1.0f + 0x1p-8f + 0x1p-20f) == 0x3f81);  // past the tie: up
  CHECK(to_bf16(-2.5f) == 0xc020);
  CHECK(to_bf16(std::numeric_limits<float>::max()) == 0x7f80);  // rounds up to infinity
  CHECK(to_bf16(-std::numeric_limits<float>::infinity()) == 0xff80);
  CHECK(std::isnan(from_bf16(to_bf16(std::numeric_limits<float>::quiet_NaN()))));
  CHECK(std::isnan(
      from_bf16(to_bf16(std::bit_cast<float>(0x7f800001u)))));  // a NaN with low bits only
  CHECK(to_bf16(std::numeric_limits<float>::denorm_min()) == 0x0000);
  CHECK(to_bf16(-std::numeric_limits<float>::denorm_min()) == 0x8000);
  CHECK(to_bf16(std::numeric_limits<float>::min()) == 0x0080);  // the smallest normal stays
}

TEST_CASE(
    "bf16 product: within float32's error of the rounded values' exact sums, rows their own") {
  std::mt19937 rng(50);
  struct Shape {
    std::size_t rows, in, out;
  };
  for (const auto [rows, in, out] : {Shape{1, 768, 48}, Shape{7, 67, 23}, Shape{20, 129, 40}}) {
    CAPTURE(rows);
    CAPTURE(in);
    CAPTURE(out);
    const auto weight = normal(in * out, 0.05f, rng);
    const auto bias = normal(out, 0.5f, rng);
    const auto x = normal(rows * in, 1.0f, rng);
    const auto w = pack_bf16_weights(weight, in, out);
    CHECK(w.bytes() == bpanels_of(out) * bf16_depth(in) * kBPanel * 2);
    const auto all = product(KernelSet::portable, w, bias, x, rows);
    for (std::size_t r = 0; r < rows; ++r)
      for (std::size_t o = 0; o < out; ++o) {
        double exact = 0.0, magnitude = 0.0;
        for (std::size_t k = 0; k < in; ++k) {
          const double p = static_cast<double>(from_bf16(to_bf16(x[r * in + k]))) *
                           from_bf16(to_bf16(weight[o * in + k]));
          exact += p;
          magnitude += std::abs(p);
        }
        CHECK(std::abs(all[r * out + o] - (exact + bias[o])) <=
              static_cast<double>(in) * 0x1p-24 * magnitude + 1e-6);
      }
    // Each row alone gives the bits it got among the others.
    for (std::size_t r = 0; r < rows; ++r) {
      const std::vector<float> one(x.begin() + r * in, x.begin() + (r + 1) * in);
      const auto alone = product(KernelSet::portable, w, bias, one, 1);
      CHECK(std::memcmp(alone.data(), all.data() + r * out, out * sizeof(float)) == 0);
    }
    // The native tile, where this CPU has it: Intel defines vdpbf16ps's order of additions, which
    // the portable tile follows and the emulated test (ctest kernels.emulated) checks bit for bit;
    // on the hardware itself the check allows a last-bit difference.
    // AMX's unit orders each pair's additions its own way (bf16gemm_amx.cpp): the same bound,
    // and each row still its own result.
    for (const auto set : {KernelSet::avx512_bf16, KernelSet::amx}) {
      if (!supports(detect_cpu_features(), set)) continue;
      CAPTURE(std::string(name(set)));
      const auto native = product(set, w, bias, x, rows);
      for (std::size_t i = 0; i < all.size(); ++i)
        CHECK(std::abs(native[i] - all[i]) <= 1e-5f * (1.0f + std::abs(all[i])));
      for (std::size_t r = 0; r < rows; ++r) {
        const std::vector<float> one(x.begin() + r * in, x.begin() + (r + 1) * in);
        const auto alone = product(set, w, bias, one, 1);
        CHECK(std::memcmp(alone.data(), native.data() + r * out, out * sizeof(float)) == 0);
      }
    }
  }
}

#endif  // MCPCLASS_WITH_LEARNED
