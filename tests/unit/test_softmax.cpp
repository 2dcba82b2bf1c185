// Attention's softmax (kernels/softmax.hpp): within a few ulp of exp-based softmax in double, the
// same bits on every kernel set, zeros outside the window.
#ifdef MCPCLASS_WITH_LEARNED

#include "kernels/softmax.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

using namespace mcpclass::kernels;

TEST_CASE("softmax: exp-accurate, the same bits on every kernel set, zeros outside the window") {
  std::mt19937 rng(5);
  std::normal_distribution<float> d(0.0f, 4.0f);
  const auto features = detect_cpu_features();
  for (const std::size_t n : {1, 7, 8, 13, 64, 130}) {
    CAPTURE(n);
    std::vector<float> scores(n);
    for (auto& v : scores) v = d(rng);
    scores[0] = -200.0f;  // under exp's range: a zero-ish weight, not a NaN
    const std::size_t lo = n > 4 ? 2 : 0, hi = n > 4 ? n - 1 : n;
    std::vector<float> want = scores;
    softmax_row(KernelSet::portable, want.data(), n, lo, hi);
    double mx = -1e30, sum = 0.0;
    for (std::size_t j = lo; j < hi; ++j) mx = std::max<double>(mx, scores[j]);
    for (std::size_t j = lo; j < hi; ++j) sum += std::exp(scores[j] - mx);
    for (std::size_t j = 0; j < n; ++j) {
      const double exact = j >= lo && j < hi ? std::exp(scores[j] - mx) / sum : 0.0;
      CHECK(std::abs(want[j] - exact) <= 4e-7 * exact + 2e-9);
    }
    for (const auto set : runnable_kernel_sets(features)) {
      CAPTURE(std::string(name(set)));
      std::vector<float> got = scores;
      softmax_row(set, got.data(), n, lo, hi);
      CHECK(std::memcmp(got.data(), want.data(), n * sizeof(float)) == 0);
    }
  }
}

#endif  // MCPCLASS_WITH_LEARNED
