#include "learned/dense_rows.hpp"

#include "learned/checkpoint_files.hpp"
#include "learned/learned_errors.hpp"

#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <cmath>

namespace mcpclass::learned::detail {

Dense take_dense(CheckpointTensors& file, const std::string& name, std::size_t in, std::size_t out,
                 bool bias) {
  Dense d{in, out, file.take(name + ".weight", {shape_dim(out), shape_dim(in)}), {}};
  if (bias) d.bias = file.take(name + ".bias", {shape_dim(out)});
  return d;
}

Norm take_norm(CheckpointTensors& file, const std::string& name, std::size_t width, bool bias) {
  Norm n{file.take(name + ".weight", {shape_dim(width)}), {}};
  if (bias) n.bias = file.take(name + ".bias", {shape_dim(width)});
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
  // Each product is one block of kRowBlock rows by one chunk of kColumnChunk outputs, run on one
  // thread: its shape, and so oneDNN's kernel and summation order, depend on neither the batch
  // nor the thread count (oneDNN may split a product's inner dimension among threads, which
  // would make a row's sums depend on the thread count in the last bits). The threads share the
  // chunks, not the row blocks: each streams only its chunks' weights from memory, once, and
  // reuses them from cache for every row block; sharing the row blocks made every thread read
  // every weight once per block it ran (a 128-token text: 4 full passes over the weights each).
  const auto blocks = rows / kRowBlock;
  const auto chunks = static_cast<std::int64_t>((dn.out + kColumnChunk - 1) / kColumnChunk);
  bool failed = false;
#pragma omp parallel for schedule(static) reduction(|| : failed)
  for (std::int64_t c = 0; c < chunks; ++c) {
    const std::size_t col = static_cast<std::size_t>(c) * kColumnChunk;
    const std::size_t width = std::min(kColumnChunk, dn.out - col);
    for (std::size_t b = 0; b < blocks; ++b) {
      const std::size_t r = b * kRowBlock;
      failed =
          failed || dnnl::sgemm('N', 'T', d(kRowBlock), d(width), d(dn.in), 1.0f, x + r * dn.in,
                                d(dn.in), dn.weight.data() + col * dn.in, d(dn.in), 1.0f,
                                y + r * dn.out + col, d(dn.out)) != dnnl::status::success;
    }
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
