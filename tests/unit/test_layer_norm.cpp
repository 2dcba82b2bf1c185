// The LayerNorm of the native encoders (kernels/dense_rows.hpp): within float precision of the
// definition in double, the same bits on every kernel set the machine runs, and residual_norm
// the residual added then the same norm.
#ifdef MCPCLASS_WITH_LEARNED

#include "kernel_test_values.hpp"
#include "kernels/dense_rows.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

using namespace mcpclass::kernels;
using kernel_test::normal;
using kernel_test::same_bits;

TEST_CASE("layer norm: the definition to float precision, the same bits on every kernel set") {
  std::mt19937 rng(53);
  const std::size_t rows = 5;
  for (const std::size_t w : {std::size_t{3}, std::size_t{768}, std::size_t{771}}) {
    CAPTURE(w);
    const Norm norm{normal(w, 1.0f, rng), normal(w, 0.5f, rng)};
    auto x = normal(rows * w, 2.0f, rng);
    for (auto& v : x) v += 10.0f;  // a large mean: the variance must not cancel
    const float eps = 1e-12f;
    std::vector<float> portable = x;
    layer_norm(KernelSet::portable, norm, eps, portable.data(), rows);
    double worst = 0.0;
    for (std::size_t r = 0; r < rows; ++r) {
      double mean = 0.0, var = 0.0;
      for (std::size_t i = 0; i < w; ++i) mean += x[r * w + i];
      mean /= static_cast<double>(w);
      for (std::size_t i = 0; i < w; ++i) var += (x[r * w + i] - mean) * (x[r * w + i] - mean);
      var /= static_cast<double>(w);
      for (std::size_t i = 0; i < w; ++i) {
        const double want =
            (x[r * w + i] - mean) / std::sqrt(var + eps) * norm.weight[i] + norm.bias[i];
        worst = std::max(worst, std::fabs(portable[r * w + i] - want));
      }
    }
    CHECK(worst < 2e-6);
    for (const auto set : runnable_kernel_sets(detect_cpu_features())) {
      CAPTURE(std::string(name(set)));
      auto got = x;
      layer_norm(set, norm, eps, got.data(), rows);
      CHECK(same_bits(got, portable));
      // residual_norm: x + residual, then the same norm, into another buffer and in place.
      const auto residual = normal(rows * w, 1.0f, rng);
      auto added = x, sum = x;
      for (std::size_t i = 0; i < sum.size(); ++i) sum[i] += residual[i];
      auto expected = sum;
      layer_norm(KernelSet::portable, norm, eps, expected.data(), rows);
      std::vector<float> normed(rows * w);
      residual_norm(set, norm, eps, added.data(), residual.data(), rows, normed.data());
      CHECK(same_bits(added, sum));
      CHECK(same_bits(normed, expected));
    }
  }
}

#endif
