// What the kernel tests share: normally distributed test values from a seeded generator, and
// bit-for-bit equality of float results (the kernels promise the same bits, not nearly).
#pragma once

#include <cstddef>
#include <cstring>
#include <random>
#include <vector>

namespace kernel_test {

/// n values from N(0, sigma²).
inline std::vector<float> normal(std::size_t n, float sigma, std::mt19937& rng) {
  std::normal_distribution<float> d(0.0f, sigma);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

/// Whether a and b hold the same floats to the bit (NaNs included).
inline bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

}  // namespace kernel_test
