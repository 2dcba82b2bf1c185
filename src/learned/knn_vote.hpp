// The similarity-weighted vote of the embedding kNN classifier. Pure function: thread-safe.
//
// Given the k nearest examples with cosine similarities s_i and categories c_i, and temperature
// T > 0: w_i = exp((s_i - s_max) / T), and with a prior mass λ spread evenly over the n
// categories,
//     p_c = (Σ_{i: c_i = c} w_i + λ/n) / (Σ_i w_i + λ).
// The nearest neighbour has weight 1, so λ (default 0.01) is the evidence one neighbour at
// similarity s_max - T·ln(100) would carry; every category keeps a small non-zero probability,
// and Σ p = 1 exactly up to rounding. With no neighbours the distribution is uniform.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace mcpclass::learned {

struct Neighbour {
  std::size_t category = 0;  ///< Class index.
  double similarity = 0.0;   ///< Cosine similarity in [-1, 1].
};

/// Throws std::invalid_argument for T <= 0, λ < 0, num_categories == 0 or an out-of-range
/// category.
std::vector<double> knn_vote(std::span<const Neighbour> neighbours, std::size_t num_categories,
                             double temperature, double prior = 0.01);

}  // namespace mcpclass::learned
