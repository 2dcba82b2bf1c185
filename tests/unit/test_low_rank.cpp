// Unmerged LoRA updates (kernels/low_rank.hpp): a base layer plus B(A x)·scale, added to the
// stacked outputs it adapts before the activation, equals the layer with W + scale·B·A merged
// (float32, the merge PEFT's merge_and_unload computes), on the model's kernel set; without
// updates it is linear() itself, bit for bit; an update that does not fit is refused.
#ifdef MCPCLASS_WITH_LEARNED

#include "kernel_test_values.hpp"
#include "kernels/low_rank.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>

using namespace mcpclass::kernels;

TEST_CASE("packed product: a LoRA update kept apart equals its merge into the weights") {
  std::mt19937 rng(48);
  const std::size_t in = 40, out = 3 * 24, r = 4, width = 24, rows = kRowBlock * 2;
  const auto w = kernel_test::normal(out * in, 0.2f, rng);
  const auto bias = kernel_test::normal(out, 0.1f, rng);
  const auto x = kernel_test::normal(rows * in, 1.0f, rng);
  // Two updates, of the first and the last third (a query and a value of stacked q, k, v).
  const auto a1 = kernel_test::normal(r * in, 0.3f, rng),
             b1 = kernel_test::normal(width * r, 0.3f, rng);
  const auto a2 = kernel_test::normal(r * in, 0.3f, rng),
             b2 = kernel_test::normal(width * r, 0.3f, rng);
  const double scale = 16.0 / r;
  auto merged = w;
  struct Update {
    const std::vector<float>* a;
    const std::vector<float>* b;
    std::size_t offset;
  };
  for (const Update& u : {Update{&a1, &b1, 0}, Update{&a2, &b2, 2 * width}})
    for (std::size_t o = 0; o < width; ++o)
      for (std::size_t i = 0; i < in; ++i) {
        double sum = 0;
        for (std::size_t k = 0; k < r; ++k) sum += (*u.b)[o * r + k] * (*u.a)[k * in + i];
        merged[(u.offset + o) * in + i] += static_cast<float>(scale * sum);
      }
  const auto set = default_compute().kernels;
  for (const auto activation :
       {std::optional<HiddenActivation>{}, std::optional{HiddenActivation::gelu}}) {
    CAPTURE(activation.has_value());
    const auto base = make_dense(w, bias, in, out, {set, Precision::f32});
    const std::vector<LowRank> deltas{make_low_rank(a1, b1, in, r, width, 0, scale, set),
                                      make_low_rank(a2, b2, in, r, width, 2 * width, scale, set)};
    std::vector<float> got(rows * out), want(rows * out), plain(rows * out), same(rows * out);
    linear_adapted(base, deltas, x.data(), rows, got.data(), activation);
    linear(make_dense(merged, bias, in, out, {set, Precision::f32}), x.data(), rows, want.data(),
           activation);
    double worst = 0;
    for (std::size_t i = 0; i < got.size(); ++i)
      worst = std::max(worst, static_cast<double>(std::abs(got[i] - want[i])));
    MESSAGE("unmerged vs merged: max |difference| = " << worst);
    CHECK(worst < 1e-5);
    linear_adapted(base, {}, x.data(), rows, same.data(), activation);
    linear(base, x.data(), rows, plain.data(), activation);
    CHECK(kernel_test::same_bits(same, plain));
  }
  // int8 and bf16 bases keep their updates in float32: within the base's own rounding.
  for (const auto precision : {Precision::int8, Precision::bf16}) {
    if (precision == Precision::bf16 && set < KernelSet::avx512_bf16) continue;
    const auto base = make_dense(w, bias, in, out, {set, precision});
    const std::vector<LowRank> deltas{make_low_rank(a1, b1, in, r, width, 0, scale, set),
                                      make_low_rank(a2, b2, in, r, width, 2 * width, scale, set)};
    std::vector<float> got(rows * out), want(rows * out);
    linear_adapted(base, deltas, x.data(), rows, got.data());
    linear(make_dense(merged, bias, in, out, {set, Precision::f32}), x.data(), rows, want.data());
    double worst = 0;
    for (std::size_t i = 0; i < got.size(); ++i)
      worst = std::max(worst, static_cast<double>(std::abs(got[i] - want[i])));
    CAPTURE(name(precision));
    CHECK(worst < 0.1);
  }
  CHECK_THROWS_AS(make_low_rank(a1, b1, in, r, width + 1, 0, scale, set), std::invalid_argument);
  const auto base = make_dense(w, bias, in, out, {set, Precision::f32});
  const std::vector<LowRank> past{make_low_rank(a1, b1, in, r, width, out - width + 1, scale, set)};
  std::vector<float> y(rows * out);
  CHECK_THROWS_AS(linear_adapted(base, past, x.data(), rows, y.data()), std::invalid_argument);
}

#endif  // MCPCLASS_WITH_LEARNED
