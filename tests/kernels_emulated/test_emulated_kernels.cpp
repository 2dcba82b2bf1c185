// Every instruction set's kernels on any CPU: the AVX2, AVX-VNNI, AVX-512, AVX-512 VNNI and BF16
// files compiled against SIMDe's portable intrinsics (emulated_kernels.hpp) give the portable
// tiles' bits, on every row count a tile handles, panel widths short of a full panel and depths
// that are not a multiple of the group. A machine without AVX-512 thus checks the AVX-512 code it
// ships; the native runs (ctest kernels.forced_*, test_qgemm, test_packed_product) check the
// compiler's own intrinsics where the CPU has them.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include "../unit/kernel_test_values.hpp"
#include "emulated_kernels.hpp"

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

struct Shape {
  std::size_t rows, in, out;
};
// Row counts across one and two tiles of every set (4, 6, 8 rows), depths off the group of 4,
// outputs off the panel of 16, and depths over one and two of the float32 product's blocks of
// 256 inputs (the partial sums parked and resumed, a narrow last panel's among them).
const Shape kShapes[] = {{1, 1, 1},     {1, 64, 16},  {3, 67, 23},  {5, 33, 40},    {6, 128, 48},
                         {7, 5, 17},    {8, 96, 32},  {9, 130, 33}, {13, 64, 64},   {17, 31, 15},
                         {24, 200, 80}, {7, 300, 23}, {9, 513, 40}, {150, 257, 140}};

}  // namespace

TEST_CASE("emulated kernels: the float32 tiles of avx2 and avx512 give the portable bits") {
  std::mt19937 rng(46);
  const std::pair<const char*, detail::Kernel> kernels[] = {
      {"avx2", detail::emulated::kernel_avx2()}, {"avx512", detail::emulated::kernel_avx512()}};
  for (const auto& shape : kShapes) {
    const auto weight = normal(shape.in * shape.out, 0.1f, rng);
    const auto bias = normal(shape.out, 0.5f, rng);
    const auto x = normal(shape.rows * shape.in, 1.0f, rng);
    const auto packed = pack_weights(weight, shape.in, shape.out);
    std::vector<float> expected(shape.rows * shape.out);
    packed_product(KernelSet::portable, packed.data(), bias.data(), shape.in, shape.out, 0,
                   panels_of(shape.out), x.data(), shape.rows, expected.data());
    for (const auto& [name, kernel] : kernels) {
      CAPTURE(name);
      CAPTURE(shape.rows);
      CAPTURE(shape.in);
      CAPTURE(shape.out);
      REQUIRE(kernel.rows > 0);
      std::vector<float> got(expected.size(), std::numeric_limits<float>::quiet_NaN());
      detail::packed_product_with(kernel, packed.data(), bias.data(), shape.in, shape.out, 0,
                                  panels_of(shape.out), x.data(), shape.rows, got.data());
      CHECK(same_bits(got, expected));
    }
  }
}

TEST_CASE(
    "emulated kernels: the int8 tiles of avx2, avx2_vnni and avx512_vnni give the portable bits") {
  std::mt19937 rng(47);
  const std::pair<const char*, detail::QKernel> kernels[] = {
      {"avx2", detail::emulated::qkernel_avx2()},
      {"avx2_vnni", detail::emulated::qkernel_avx2_vnni()},
      {"avx512_vnni", detail::emulated::qkernel_avx512_vnni()}};
  for (const auto& shape : kShapes) {
    auto weight = normal(shape.in * shape.out, 0.1f, rng);
    weight[0] = 0.4f;  // a weight at ±127 next to small ones
    const auto bias = normal(shape.out, 0.5f, rng);
    auto x = normal(shape.rows * shape.in, 1.0f, rng);
    x[0] = -3.5f;  // and an input at -127: the largest products the sign trick and x + 128 meet
    const auto w = quantize_weights(weight, shape.in, shape.out);
    const std::size_t depth = quantized_depth(shape.in);
    std::vector<std::int8_t> q(shape.rows * depth), q_emulated(q.size());
    std::vector<float> scale(shape.rows), scale_emulated(shape.rows);
    quantize_rows(KernelSet::portable, x.data(), shape.rows, shape.in, q.data(), scale.data());
    const auto quantize_row = detail::emulated::quantize_row_avx2();
    for (std::size_t r = 0; r < shape.rows; ++r)
      quantize_row(x.data() + r * shape.in, shape.in, q_emulated.data() + r * depth,
                   scale_emulated.data() + r);
    CHECK(q_emulated == q);
    CHECK(same_bits(scale_emulated, scale));
    std::vector<float> expected(shape.rows * shape.out);
    qgemm(KernelSet::portable, w, bias.data(), 0, qpanels_of(shape.out), q.data(), scale.data(),
          shape.rows, expected.data());
    for (const auto& [name, kernel] : kernels) {
      CAPTURE(name);
      CAPTURE(shape.rows);
      CAPTURE(shape.in);
      CAPTURE(shape.out);
      REQUIRE(kernel.rows > 0);
      std::vector<float> got(expected.size(), std::numeric_limits<float>::quiet_NaN());
      detail::qgemm_with(kernel, w, bias.data(), 0, qpanels_of(shape.out), q.data(), scale.data(),
                         shape.rows, got.data());
      CHECK(same_bits(got, expected));
      // A range from the second panel on: tiles of several panels that start past the first.
      std::fill(got.begin(), got.end(), std::numeric_limits<float>::quiet_NaN());
      detail::qgemm_with(kernel, w, bias.data(), 0, 1, q.data(), scale.data(), shape.rows,
                         got.data());
      detail::qgemm_with(kernel, w, bias.data(), 1, qpanels_of(shape.out), q.data(), scale.data(),
                         shape.rows, got.data());
      CHECK(same_bits(got, expected));
    }
    // amx's tiles (two row blocks by two panels, a last block of fewer rows from a padded copy):
    // the panels in one call, then split after the first (a lone panel's tiles).
    CAPTURE("amx");
    const auto amx = detail::emulated::qgemm_amx();
    REQUIRE(bool(amx));
    std::vector<float> got(expected.size(), std::numeric_limits<float>::quiet_NaN());
    amx(w, bias.data(), 0, qpanels_of(shape.out), q.data(), scale.data(), shape.rows, got.data());
    CHECK(same_bits(got, expected));
    std::fill(got.begin(), got.end(), std::numeric_limits<float>::quiet_NaN());
    amx(w, bias.data(), 0, 1, q.data(), scale.data(), shape.rows, got.data());
    amx(w, bias.data(), 1, qpanels_of(shape.out), q.data(), scale.data(), shape.rows, got.data());
    CHECK(same_bits(got, expected));
  }
}

TEST_CASE("emulated kernels: avx2's softmax gives the portable bits") {
  std::mt19937 rng(48);
  const auto row_avx2 = detail::emulated::softmax_row_avx2();
  REQUIRE(static_cast<bool>(row_avx2));
  for (std::size_t n : {1u, 7u, 8u, 9u, 31u, 128u, 200u}) {
    CAPTURE(n);
    auto row = normal(n, 4.0f, rng);
    if (n > 3) row[2] = -200.0f;  // under exp's lowest: clamped
    auto expected = row, got = row;
    softmax_row(KernelSet::portable, expected.data(), n, 0, n);
    row_avx2(got.data(), n);
    CHECK(same_bits(got, expected));
  }
}

TEST_CASE("emulated kernels: avx2's and avx512's activations give the portable bits") {
  std::mt19937 rng(50);
  const std::pair<const char*, detail::ActivationKernel> kernels[] = {
      {"avx2", detail::emulated::activation_avx2()},
      {"avx512", detail::emulated::activation_avx512()}};
  for (const auto& [set, kernel] : kernels) {
    REQUIRE(static_cast<bool>(kernel.activate));
    for (const auto a : {HiddenActivation::gelu, HiddenActivation::gelu_tanh,
                         HiddenActivation::silu, HiddenActivation::relu}) {
      for (std::size_t n : {1u, 7u, 8u, 9u, 15u, 16u, 17u, 100u}) {
        CAPTURE(set);
        CAPTURE(static_cast<int>(a));
        CAPTURE(n);
        auto x = normal(n, 3.0f, rng);
        if (n > 3) x[2] = -30.0f;  // exp's argument under its lowest: clamped
        const auto gate = normal(n, 1.0f, rng);
        auto expected = x, got = x;
        activate_columns(KernelSet::portable, a, expected.data(), 1, n, 0, n);
        kernel.activate(a, got.data(), n);
        CHECK(same_bits(got, expected));
        std::vector<float> gated(n);
        kernel.gate(a, x.data(), gate.data(), n, gated.data());
        for (std::size_t i = 0; i < n; ++i) expected[i] *= gate[i];
        CHECK(same_bits(gated, expected));
      }
    }
  }
}

TEST_CASE("emulated kernels: avx2's LayerNorm row gives the portable bits") {
  std::mt19937 rng(52);
  const auto row_avx2 = detail::emulated::norm_row_avx2();
  REQUIRE(static_cast<bool>(row_avx2));
  for (std::size_t w : {1u, 3u, 4u, 7u, 64u, 771u}) {
    for (const bool bias : {true, false}) {
      CAPTURE(w);
      CAPTURE(bias);
      const Norm norm{normal(w, 1.0f, rng), bias ? normal(w, 0.5f, rng) : std::vector<float>{}};
      auto x = normal(w, 3.0f, rng);
      for (auto& v : x) v += 5.0f;  // an offset the mean must take out
      std::vector<float> expected(w), got(w);
      layer_norm(KernelSet::portable, norm, 1e-5f, (expected = x).data(), 1);
      row_avx2(norm, 1e-5f, x.data(), got.data(), w);
      CHECK(same_bits(got, expected));
    }
  }
}

TEST_CASE("emulated kernels: avx512's bf16 rounding of a row gives to_bf16's bits") {
  const auto row = detail::emulated::bf16_row_avx512();
  REQUIRE(static_cast<bool>(row));
  std::mt19937 rng(51);
  // Ties, subnormals of both signs, ±0, NaNs with high or only low payload bits, infinities,
  // the largest finite value (rounds up to infinity), then random values and random bits.
  std::vector<float> x = {1.0f + 0x1p-8f,
                          1.0f + 3 * 0x1p-8f,
                          -0.0f,
                          0.0f,
                          std::numeric_limits<float>::denorm_min(),
                          -std::numeric_limits<float>::denorm_min(),
                          std::bit_cast<float>(0x807fffffu),
                          std::numeric_limits<float>::min(),
                          std::numeric_limits<float>::quiet_NaN(),
                          std::bit_cast<float>(0x7f800001u),
                          std::bit_cast<float>(0xff800001u),
                          std::numeric_limits<float>::infinity(),
                          -std::numeric_limits<float>::infinity(),
                          std::numeric_limits<float>::max()};
  for (const float v : normal(200, 3.0f, rng)) x.push_back(v);
  std::uniform_int_distribution<std::uint32_t> any_bits;
  for (int i = 0; i < 300; ++i) x.push_back(std::bit_cast<float>(any_bits(rng)));
  for (const std::size_t in : {std::size_t{1}, std::size_t{16}, std::size_t{37}, x.size()}) {
    CAPTURE(in);
    std::vector<std::uint16_t> got(bf16_depth(in), 0xffff), expected(bf16_depth(in), 0);
    for (std::size_t k = 0; k < in; ++k) expected[k] = to_bf16(x[k]);
    row(x.data(), in, got.data());
    CHECK(got == expected);
  }
}

TEST_CASE("emulated kernels: the bf16 tiles of avx512_bf16 and amx give the portable bits") {
  std::mt19937 rng(49);
  const auto kernel = detail::emulated::bf16kernel_avx512_bf16();
  REQUIRE(kernel.rows == 8);
  REQUIRE(kernel.panels == 3);
  const auto amx = detail::emulated::bf16gemm_amx();
  REQUIRE(bool(amx));
  for (const auto& shape : kShapes) {
    CAPTURE(shape.rows);
    CAPTURE(shape.in);
    CAPTURE(shape.out);
    const auto weight = normal(shape.in * shape.out, 0.1f, rng);
    const auto bias = normal(shape.out, 0.5f, rng);
    const auto x = normal(shape.rows * shape.in, 1.0f, rng);
    const auto w = pack_bf16_weights(weight, shape.in, shape.out);
    std::vector<std::uint16_t> xb(shape.rows * bf16_depth(shape.in));
    bf16_rows(KernelSet::portable, x.data(), shape.rows, shape.in, xb.data());
    std::vector<float> expected(shape.rows * shape.out);
    bf16gemm(KernelSet::portable, w, bias.data(), 0, bpanels_of(shape.out), xb.data(), shape.rows,
             expected.data());
    std::vector<float> got(expected.size(), std::numeric_limits<float>::quiet_NaN());
    detail::bf16gemm_with(kernel, w, bias.data(), 0, bpanels_of(shape.out), xb.data(), shape.rows,
                          got.data());
    CHECK(same_bits(got, expected));
    std::fill(got.begin(), got.end(), std::numeric_limits<float>::quiet_NaN());
    detail::bf16gemm_with(kernel, w, bias.data(), 0, 1, xb.data(), shape.rows, got.data());
    detail::bf16gemm_with(kernel, w, bias.data(), 1, bpanels_of(shape.out), xb.data(), shape.rows,
                          got.data());
    CHECK(same_bits(got, expected));
    std::fill(got.begin(), got.end(), std::numeric_limits<float>::quiet_NaN());
    amx(w, bias.data(), 0, 1, xb.data(), shape.rows, got.data());
    amx(w, bias.data(), 1, bpanels_of(shape.out), xb.data(), shape.rows, got.data());
    CHECK(same_bits(got, expected));
  }
}
