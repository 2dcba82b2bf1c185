// The activations of the native encoders (kernels/activate.hpp): GELU, the tanh GELU and SiLU
// against their definitions in double, every kernel set the machine runs giving the portable bits,
// the product's epilogue and the gated (GeGLU) form equal to the plain activation, NaN kept.
#ifdef MCPCLASS_WITH_LEARNED

#include "kernel_test_values.hpp"
#include "kernels/activate.hpp"
#include "kernels/dense_rows.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

using namespace mcpclass::kernels;
using kernel_test::same_bits;

namespace {

double gelu_reference(double x) {
  return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
}

double gelu_tanh_reference(double x) {
  return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
}

// `a` over x[0, n), as one row.
void activate(KernelSet set, HiddenActivation a, float* x, std::size_t n) {
  activate_columns(set, a, x, 1, n, 0, n);
}

// Every 1/1024 in [−10, 10], and a few beyond.
std::vector<float> grid() {
  std::vector<float> v;
  for (int i = -10240; i <= 10240; ++i) v.push_back(static_cast<float>(i) / 1024.0f);
  for (float x : {-1e4f, -50.0f, 20.0f, 1e4f, 1e-30f, -1e-30f}) v.push_back(x);
  return v;
}

}  // namespace

TEST_CASE("activations: the GELUs within 3e-7 of their definitions, on every kernel set") {
  const auto xs = grid();
  for (const auto set : runnable_kernel_sets(detect_cpu_features())) {
    CAPTURE(std::string(name(set)));
    auto gelu = xs, tanh_gelu = xs, relu = xs;
    activate(set, HiddenActivation::gelu, gelu.data(), gelu.size());
    activate(set, HiddenActivation::gelu_tanh, tanh_gelu.data(), tanh_gelu.size());
    activate(set, HiddenActivation::relu, relu.data(), relu.size());
    double worst_gelu = 0.0, worst_tanh = 0.0;
    for (std::size_t i = 0; i < xs.size(); ++i) {
      // Absolute error below 1, relative above (the GELUs grow as x).
      const double scale = std::max(1.0, std::fabs(static_cast<double>(xs[i])));
      worst_gelu = std::max(worst_gelu, std::fabs(gelu[i] - gelu_reference(xs[i])) / scale);
      worst_tanh =
          std::max(worst_tanh, std::fabs(tanh_gelu[i] - gelu_tanh_reference(xs[i])) / scale);
      CHECK(relu[i] == std::max(xs[i], 0.0f));
    }
    CHECK(worst_gelu <= 3e-7);
    CHECK(worst_tanh <= 3e-7);
    // The same bits as the portable lanes.
    auto portable = xs;
    activate(KernelSet::portable, HiddenActivation::gelu, portable.data(), portable.size());
    CHECK(same_bits(gelu, portable));
  }
}

TEST_CASE("activations: SiLU within 3e-7 of its definition, on every kernel set") {
  const auto xs = grid();
  std::vector<float> portable = xs;
  activate(KernelSet::portable, HiddenActivation::silu, portable.data(), portable.size());
  for (const auto set : runnable_kernel_sets(detect_cpu_features())) {
    CAPTURE(std::string(name(set)));
    auto silu = xs;
    activate(set, HiddenActivation::silu, silu.data(), silu.size());
    double worst = 0.0;
    for (std::size_t i = 0; i < xs.size(); ++i) {
      const double x = xs[i];
      worst = std::max(worst,
                       std::fabs(silu[i] - x / (1.0 + std::exp(-x))) / std::max(1.0, std::fabs(x)));
    }
    CHECK(worst <= 3e-7);
    CHECK(same_bits(silu, portable));
  }
}

TEST_CASE("activations: a NaN stays NaN and +infinity stays +infinity") {
  const float nan = std::numeric_limits<float>::quiet_NaN(),
              inf = std::numeric_limits<float>::infinity();
  for (const auto set : runnable_kernel_sets(detect_cpu_features())) {
    for (const auto a : {HiddenActivation::gelu, HiddenActivation::gelu_tanh,
                         HiddenActivation::relu, HiddenActivation::silu}) {
      CAPTURE(std::string(name(set)));
      CAPTURE(static_cast<int>(a));
      // Eight lanes and a tail: both paths see each value.
      std::vector<float> x(9, nan);
      x[1] = inf;
      x[8] = inf;
      activate(set, a, x.data(), x.size());
      CHECK(std::isnan(x[0]));
      CHECK(x[1] == inf);
      CHECK(x[8] == inf);
    }
  }
}

TEST_CASE("activations: linear's epilogue and the gated form equal the activation after") {
  std::mt19937 rng(51);
  const std::size_t in = 40, out = 70, rows = 9;
  const auto weight = kernel_test::normal(in * out, 0.3f, rng);
  const auto bias = kernel_test::normal(out, 0.5f, rng);
  const auto x = kernel_test::normal(rows * in, 1.0f, rng);
  for (const auto set : runnable_kernel_sets(detect_cpu_features())) {
    for (const auto precision : {Precision::f32, Precision::int8}) {
      CAPTURE(std::string(name(set)));
      CAPTURE(std::string(name(precision)));
      const auto dense = make_dense(weight, bias, in, out, {set, precision});
      std::vector<float> after(rows * out), fused(rows * out);
      linear(dense, x.data(), rows, after.data());
      activate(set, HiddenActivation::gelu, after.data(), after.size());
      linear(dense, x.data(), rows, fused.data(), HiddenActivation::gelu);
      CHECK(same_bits(fused, after));
    }
    // GeGLU: rows of [input | gate].
    const std::size_t m = 35;
    const auto wide = kernel_test::normal(rows * 2 * m, 2.0f, rng);
    std::vector<float> gated(rows * m), expected(rows * m);
    gated_activate(set, HiddenActivation::gelu, wide.data(), rows, m, gated.data());
    for (std::size_t r = 0; r < rows; ++r)
      for (std::size_t j = 0; j < m; ++j) {
        float v = wide[r * 2 * m + j];
        activate(KernelSet::portable, HiddenActivation::gelu, &v, 1);
        expected[r * m + j] = v * wide[r * 2 * m + m + j];
      }
    CHECK(same_bits(gated, expected));
  }
}

#endif
