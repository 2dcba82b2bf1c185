#include "learned/knn_vote.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace mcpclass::learned {

std::vector<double> knn_vote(std::span<const Neighbour> neighbours, std::size_t num_categories,
                             double temperature, double prior) {
  if (num_categories == 0) throw std::invalid_argument("knn_vote: no categories");
  if (!(temperature > 0.0)) throw std::invalid_argument("knn_vote: temperature must be > 0");
  if (!(prior >= 0.0)) throw std::invalid_argument("knn_vote: prior must be >= 0");
  const auto n = static_cast<double>(num_categories);
  std::vector<double> p(num_categories, 0.0);
  if (neighbours.empty()) {
    std::fill(p.begin(), p.end(), 1.0 / n);
    return p;
  }
  double s_max = neighbours[0].similarity;
  for (const auto& nb : neighbours) s_max = std::max(s_max, nb.similarity);
  double total = prior;
  for (const auto& nb : neighbours) {
    if (nb.category >= num_categories)
      throw std::invalid_argument("knn_vote: neighbour category out of range");
    const double w = std::exp((nb.similarity - s_max) / temperature);
    p[nb.category] += w;
    total += w;
  }
  for (auto& v : p) v = (v + prior / n) / total;
  return p;
}

}  // namespace mcpclass::learned
