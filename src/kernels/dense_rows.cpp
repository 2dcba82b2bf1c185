#include "kernels/dense_rows.hpp"

#include "kernels/packed_product.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>

namespace mcpclass::kernels {

const char* name(Precision p) {
  switch (p) {
    case Precision::int8:
      return "int8";
    case Precision::bf16:
      return "bf16";
    case Precision::f32:
      break;
  }
  return "f32";
}

Compute default_compute() {
  return {choose_kernel_set(detect_cpu_features(), ""), Precision::f32};
}

Dense make_dense(std::span<const float> weight, std::vector<float> bias, std::size_t in,
                 std::size_t out, const Compute& compute) {
  Dense d{in, out, compute.kernels, {}, {}, {}, std::move(bias)};
  switch (compute.precision) {
    case Precision::int8:
      d.quantized = quantize_weights(weight, in, out);
      break;
    case Precision::bf16:
      d.bf16 = pack_bf16_weights(weight, in, out);
      break;
    case Precision::f32:
      d.weight = pack_weights(weight, in, out);
      break;
  }
  return d;
}

void linear(const Dense& dn, const float* x, std::size_t rows, float* y,
            std::optional<HiddenActivation> activation) {
  // The threads share the panels, not the rows: each streams only its panels' weights from
  // memory, once per pass of rows, and a row's result does not depend on the split.
  const float* bias = dn.bias.empty() ? nullptr : dn.bias.data();
  // Outputs [panel_width · first, panel_width · last) of every row, as the thread left them.
  const auto finish = [&](std::size_t panel_width, std::size_t first, std::size_t last) {
    if (activation)
      activate_columns(dn.kernels, *activation, y, rows, dn.out, first * panel_width,
                       std::min(dn.out, last * panel_width));
  };
  if (!dn.bf16.packed.empty()) {
    // bf16: as int8, each thread rounds its share of the rows, then runs its panels over all.
    const std::size_t depth = bf16_depth(dn.in), panels = bpanels_of(dn.out);
    // Not zeroed: bf16_rows writes every value of its rows, pads included.
    const auto xb = std::make_unique_for_overwrite<std::uint16_t[]>(rows * depth);
#pragma omp parallel
    {
      const auto t = static_cast<std::size_t>(omp_get_thread_num());
      const auto team = static_cast<std::size_t>(omp_get_num_threads());
      const std::size_t first = rows * t / team, last = rows * (t + 1) / team;
      bf16_rows(dn.kernels, x + first * dn.in, last - first, dn.in, xb.get() + first * depth);
#pragma omp barrier
      bf16gemm(dn.kernels, dn.bf16, bias, panels * t / team, panels * (t + 1) / team, xb.get(),
               rows, y);
      finish(kBPanel, panels * t / team, panels * (t + 1) / team);
    }
    return;
  }
  if (dn.quantized.packed.empty()) {
    const std::size_t panels = panels_of(dn.out);
#pragma omp parallel
    {
      const auto t = static_cast<std::size_t>(omp_get_thread_num());
      const auto team = static_cast<std::size_t>(omp_get_num_threads());
      packed_product(dn.kernels, dn.weight.data(), bias, dn.in, dn.out, panels * t / team,
                     panels * (t + 1) / team, x, rows, y);
      finish(kPanel, panels * t / team, panels * (t + 1) / team);
    }
    return;
  }
  // int8: each thread quantizes its share of the rows, then (past the barrier) runs its panels
  // over all of them.
  const std::size_t depth = quantized_depth(dn.in), panels = qpanels_of(dn.out);
  // Not zeroed: quantize_rows writes every value of its rows, pads included (zeroing them cost
  // 4.8% of the CPU of BERT-base int8 at 32 tokens, and 6% more the other thread spent waiting).
  const auto q = std::make_unique_for_overwrite<std::int8_t[]>(rows * depth);
  const auto scale = std::make_unique_for_overwrite<float[]>(rows);
#pragma omp parallel
  {
    const auto t = static_cast<std::size_t>(omp_get_thread_num());
    const auto team = static_cast<std::size_t>(omp_get_num_threads());
    const std::size_t first = rows * t / team, last = rows * (t + 1) / team;
    quantize_rows(dn.kernels, x + first * dn.in, last - first, dn.in, q.get() + first * depth,
                  scale.get() + first);
#pragma omp barrier
    qgemm(dn.kernels, dn.quantized, bias, panels * t / team, panels * (t + 1) / team, q.get(),
          scale.get(), rows, y);
    finish(kQPanel, panels * t / team, panels * (t + 1) / team);
  }
}

namespace {

// The portable row, in the four lanes the AVX2 row keeps (dense_rows.hpp). Measured on the
// 2-core AVX2 EPYC (BERT-base, one residual_norm of 128 rows of 768, 2 threads, best of 20):
// 0.33 ms these lanes, 0.25 ms the one running sum per row they replace, 0.12 ms the AVX2 row.
void norm_row_portable(const Norm& n, float eps, const float* in, float* out, std::size_t w) {
  double lanes[4] = {};
  std::size_t i = 0;
  for (; i + 4 <= w; i += 4)
    for (std::size_t l = 0; l < 4; ++l) lanes[l] += in[i + l];
  for (std::size_t l = 0; i < w; ++i, ++l) lanes[l] += in[i];
  const double mean = detail::lane_sum(lanes) / static_cast<double>(w);
  std::fill_n(lanes, 4, 0.0);
  for (i = 0; i + 4 <= w; i += 4)
    for (std::size_t l = 0; l < 4; ++l) {
      const double d = in[i + l] - mean;
      lanes[l] = std::fma(d, d, lanes[l]);
    }
  for (std::size_t l = 0; i < w; ++i, ++l) {
    const double d = in[i] - mean;
    lanes[l] = std::fma(d, d, lanes[l]);
  }
  const double var = detail::lane_sum(lanes) / static_cast<double>(w);
  const double inv = 1.0 / std::sqrt(var + eps);
  for (i = 0; i < w; ++i) {
    out[i] = static_cast<float>((in[i] - mean) * inv) * n.weight[i];
    if (!n.bias.empty()) out[i] += n.bias[i];
  }
}

detail::NormRow norm_row_for(KernelSet set) {
  if (set != KernelSet::portable) {
    if (const auto row = detail::norm_row_avx2(); row != nullptr) return row;
  }
  return norm_row_portable;
}

}  // namespace

void residual_norm(KernelSet set, const Norm& n, float eps, float* x, const float* residual,
                   std::size_t rows, float* normed) {
  const auto norm_row = norm_row_for(set);
  const std::size_t w = n.weight.size();
  const auto count = static_cast<std::int64_t>(rows);
#pragma omp parallel for schedule(static)
  for (std::int64_t r = 0; r < count; ++r) {
    float* row = x + static_cast<std::size_t>(r) * w;
    if (residual != nullptr) {
      const float* add = residual + static_cast<std::size_t>(r) * w;
      for (std::size_t i = 0; i < w; ++i) row[i] += add[i];
    }
    norm_row(n, eps, row, normed + static_cast<std::size_t>(r) * w, w);
  }
}

void layer_norm(KernelSet set, const Norm& n, float eps, float* x, std::size_t rows) {
  const auto norm_row = norm_row_for(set);
  const std::size_t w = n.weight.size();
  for (std::size_t r = 0; r < rows; ++r) norm_row(n, eps, x + r * w, x + r * w, w);
}

}  // namespace mcpclass::kernels
