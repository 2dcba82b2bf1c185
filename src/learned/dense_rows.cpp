#include "learned/dense_rows.hpp"

#include "learned/checkpoint_files.hpp"
#include "mcpclass/classify/errors.hpp"

#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <cmath>

namespace mcpclass::learned {
using classify::ClassifyError;
}  // namespace mcpclass::learned

namespace mcpclass::learned::detail {

namespace {

std::int64_t s(std::size_t v) {
  return static_cast<std::int64_t>(v);
}

}  // namespace

Dense take_dense(CheckpointTensors& file, const std::string& name, std::size_t in, std::size_t out,
                 bool bias) {
  Dense d{in, out, file.take(name + ".weight", {s(out), s(in)}), {}};
  if (bias) d.bias = file.take(name + ".bias", {s(out)});
  return d;
}

Norm take_norm(CheckpointTensors& file, const std::string& name, std::size_t width, bool bias) {
  Norm n{file.take(name + ".weight", {s(width)}), {}};
  if (bias) n.bias = file.take(name + ".bias", {s(width)});
  return n;
}

void linear(const Dense& dn, const float* x, std::size_t rows, float* y) {
  using dim = dnnl::memory::dim;
  const auto d = [](std::size_t v) { return static_cast<dim>(v); };
  if (dn.bias.empty())
    std::fill_n(y, rows * dn.out, 0.0f);
  else
    for (std::size_t r = 0; r < rows; ++r)
      std::copy(dn.bias.begin(), dn.bias.end(), y + r * dn.out);
  // The blocks are shared among the call's threads and each product runs on one: oneDNN may
  // split a product's inner dimension among threads, which would make a row's sums (in the last
  // bits) depend on the thread count.
  const auto blocks = static_cast<std::int64_t>(rows / kRowBlock);
  bool failed = false;
#pragma omp parallel for schedule(static) reduction(|| : failed)
  for (std::int64_t b = 0; b < blocks; ++b) {
    const std::size_t r = static_cast<std::size_t>(b) * kRowBlock;
    failed = failed ||
             dnnl::sgemm('N', 'T', d(kRowBlock), d(dn.out), d(dn.in), 1.0f, x + r * dn.in,
                         d(dn.in), dn.weight.data(), d(dn.in), 1.0f, y + r * dn.out,
                         d(dn.out)) != dnnl::status::success;
  }
  if (failed) throw ClassifyError("oneDNN sgemm failed in the encoder");
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
