#include "learned/dense_rows.hpp"

#include "learned/checkpoint_files.hpp"
#include "learned/packed_product.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>

namespace mcpclass::learned::detail {

Dense take_dense(CheckpointTensors& file, const std::string& name, std::size_t in, std::size_t out,
                 bool bias) {
  Dense d{in,
          out,
          pack_weights(file.take(name + ".weight", {shape_dim(out), shape_dim(in)}), in, out),
          {}};
  if (bias) d.bias = file.take(name + ".bias", {shape_dim(out)});
  return d;
}

Dense take_stacked_dense(CheckpointTensors& file, const std::vector<std::string>& names,
                         std::size_t in, std::size_t out) {
  std::vector<float> weight, bias;
  for (const auto& name : names) {
    const auto w = file.take(name + ".weight", {shape_dim(out), shape_dim(in)});
    weight.insert(weight.end(), w.begin(), w.end());
    const auto b = file.take(name + ".bias", {shape_dim(out)});
    bias.insert(bias.end(), b.begin(), b.end());
  }
  const std::size_t stacked = names.size() * out;
  return {in, stacked, pack_weights(weight, in, stacked), std::move(bias)};
}

Norm take_norm(CheckpointTensors& file, const std::string& name, std::size_t width, bool bias) {
  Norm n{file.take(name + ".weight", {shape_dim(width)}), {}};
  if (bias) n.bias = file.take(name + ".bias", {shape_dim(width)});
  return n;
}

void linear(const Dense& dn, const float* x, std::size_t rows, float* y) {
  // The threads share the panels, not the rows: each streams only its panels' weights from
  // memory, once per pass of rows, and a row's result does not depend on the split.
  const std::size_t panels = panels_of(dn.out);
#pragma omp parallel
  {
    const auto t = static_cast<std::size_t>(omp_get_thread_num());
    const auto team = static_cast<std::size_t>(omp_get_num_threads());
    packed_product(dn.weight.data(), dn.bias.empty() ? nullptr : dn.bias.data(), dn.in, dn.out,
                   panels * t / team, panels * (t + 1) / team, x, rows, y);
  }
}

void layer_norm(const Norm& n, float eps, float* x, std::size_t rows) {
  const std::size_t w = n.weight.size();
  for (std::size_t r = 0; r < rows; ++r) {
    float* row = x + r * w;
    double mean = 0.0;
    for (std::size_t i = 0; i < w; ++i) mean += row[i];
    mean /= static_cast<double>(w);
    double var = 0.0;
    for (std::size_t i = 0; i < w; ++i) var += (row[i] - mean) * (row[i] - mean);
    const double inv = 1.0 / std::sqrt(var / static_cast<double>(w) + eps);
    for (std::size_t i = 0; i < w; ++i) {
      row[i] = static_cast<float>((row[i] - mean) * inv) * n.weight[i];
      if (!n.bias.empty()) row[i] += n.bias[i];
    }
  }
}

}  // namespace mcpclass::learned::detail
