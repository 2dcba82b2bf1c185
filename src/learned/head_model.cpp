#include "learned/head_model.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>

namespace mcpclass::learned::detail {

namespace {

void softmax_in_place(std::vector<double>& v, double temperature) {
  const double mx = *std::max_element(v.begin(), v.end());
  double sum = 0.0;
  for (auto& x : v) sum += (x = std::exp((x - mx) / temperature));
  for (auto& x : v) x /= sum;
}

// Eight independent partial sums: the compiler keeps them in one vector register (no
// reassociation needed), several times faster than one serial sum for the wide ensemble layers.
float dot(const float* a, const float* b, std::size_t n) {
  float acc[8] = {};
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (std::size_t k = 0; k < 8; ++k) acc[k] += a[i + k] * b[i + k];
  float s = 0.0f;
  for (; i < n; ++i) s += a[i] * b[i];
  for (const float v : acc) s += v;
  return s;
}

// `out` values: row o of the row-major out × in matrix `weight` times x, plus bias[o] (if any).
std::vector<float> affine(const std::vector<float>& weight, const std::vector<float>* bias,
                          std::size_t out, std::size_t in, std::span<const float> x) {
  std::vector<float> y(out);
  for (std::size_t o = 0; o < out; ++o)
    y[o] = (bias ? (*bias)[o] : 0.0f) + dot(weight.data() + o * in, x.data(), in);
  return y;
}

// |x|, at least 1e-12 (so dividing by it is safe).
double l2_norm(std::span<const float> x) {
  double sum = 0.0;
  for (const float v : x) sum += static_cast<double>(v) * v;
  return std::max(std::sqrt(sum), 1e-12);
}

}  // namespace

double ScopeModel::score(std::span<const float> embedding, std::span<const double> p) const {
  const auto projected = projection.empty()
                             ? std::vector<float>()
                             : affine(projection, nullptr, dimension, input, embedding);
  const std::span<const float> e = projection.empty() ? embedding : projected;
  const double norm = l2_norm(e);
  std::vector<std::pair<float, std::size_t>> sims;
  const auto compare = [&](std::size_t begin, std::size_t end) {
    for (std::size_t r = begin; r < end; ++r)
      sims.emplace_back(dot(prototypes.data() + r * dimension, e.data(), dimension), r);
  };
  if (centroids.empty()) {
    sims.reserve(rows());
    compare(0, rows());
  } else {
    const std::size_t lists = centroids.size() / dimension;
    std::vector<std::pair<float, std::size_t>> nearest(lists);
    for (std::size_t l = 0; l < lists; ++l)
      nearest[l] = {dot(centroids.data() + l * dimension, e.data(), dimension), l};
    const std::size_t searched = std::min(std::max<std::size_t>(probes, 1), lists);
    std::partial_sort(nearest.begin(), nearest.begin() + static_cast<std::ptrdiff_t>(searched),
                      nearest.end(), std::greater<>());
    for (std::size_t i = 0; i < searched; ++i)
      compare(offsets[nearest[i].second], offsets[nearest[i].second + 1]);
  }
  const std::size_t n = std::min(std::max<std::size_t>(k, 1), sims.size());
  std::partial_sort(sims.begin(), sims.begin() + static_cast<std::ptrdiff_t>(n), sims.end(),
                    std::greater<>());
  double sum = 0.0;
  double tightness = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    sum += sims[i].first;
    if (!density.empty()) tightness += density[sims[i].second];
  }
  if (n == 0) return 0.0;
  double s = (sum / norm - density_weight * tightness) / static_cast<double>(n);
  if (catchall && *catchall < p.size()) s -= catchall_weight * p[*catchall];
  if (!label_bias.empty()) s += label_energy_weight * label_energy(embedding);
  return s;
}

double ScopeModel::label_energy(std::span<const float> embedding) const {
  const double unit = label_scale / l2_norm(embedding);
  const auto products = affine(label_weights, nullptr, label_bias.size(), input, embedding);
  std::vector<double> z(products.size());
  for (std::size_t l = 0; l < z.size(); ++l) z[l] = unit * products[l] + label_bias[l];
  const double top = *std::max_element(z.begin(), z.end());
  double sum = 0.0;
  for (const double v : z) sum += std::exp(v - top);
  return top + std::log(sum);
}

double ScopeModel::in_scope(double s) const {
  if (quantiles.size() < 2 || s <= quantiles.front()) return 0.0;
  if (s >= quantiles.back()) return 1.0;
  const auto hi = static_cast<std::size_t>(
      std::upper_bound(quantiles.begin(), quantiles.end(), static_cast<float>(s)) -
      quantiles.begin());
  const double a = quantiles[hi - 1];
  const double b = quantiles[hi];
  const double within = b > a ? (s - a) / (b - a) : 0.0;
  return (static_cast<double>(hi - 1) + within) / static_cast<double>(quantiles.size() - 1);
}

std::vector<std::pair<std::size_t, double>> tf_idf(std::span<const std::int32_t> ids,
                                                   std::span<const float> idf) {
  std::map<std::size_t, double> counts;
  for (const auto id : ids)
    if (id >= 0 && static_cast<std::size_t>(id) < idf.size())
      counts[static_cast<std::size_t>(id)] += 1.0;
  std::vector<std::pair<std::size_t, double>> x;
  double norm = 0.0;
  for (const auto& [id, count] : counts) {
    x.emplace_back(id, std::log1p(count) * idf[id]);
    norm += x.back().second * x.back().second;
  }
  norm = std::max(std::sqrt(norm), 1e-9);
  for (auto& e : x) e.second /= norm;
  return x;
}

std::vector<double> LexicalLayer::probabilities(std::span<const std::int32_t> ids) const {
  const auto x = tf_idf(ids, idf);
  std::vector<double> logits(bias.begin(), bias.end());
  for (std::size_t c = 0; c < logits.size(); ++c) {
    const float* row = weight.data() + c * idf.size();
    for (const auto& [id, v] : x) logits[c] += static_cast<double>(row[id]) * v;
  }
  softmax_in_place(logits, temperature);
  return logits;
}

std::vector<double> HeadModel::probabilities(std::span<const float> x,
                                             std::span<const std::int32_t> ids,
                                             double temperature_override) const {
  std::vector<float> h(x.begin(), x.end());
  for (std::size_t l = 0; l < layers.size(); ++l) {
    const auto& layer = layers[l];
    auto y = affine(layer.weight, &layer.bias, layer.out, layer.in, h);
    if (l + 1 < layers.size())
      for (auto& v : y) v = std::max(0.0f, v);
    h = std::move(y);
  }
  std::vector<double> p(h.begin(), h.end());
  softmax_in_place(p, temperature_override > 0.0 ? temperature_override : temperature);
  if (lexical.empty() || lexical.mix <= 0.0) return p;
  const auto lex = lexical.probabilities(ids);
  for (std::size_t c = 0; c < p.size(); ++c)
    p[c] = std::log(std::max((1.0 - lexical.mix) * p[c] + lexical.mix * lex[c], 1e-30));
  softmax_in_place(p, lexical.mix_temperature);
  return p;
}

}  // namespace mcpclass::learned::detail
