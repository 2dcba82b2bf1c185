#include "kernels/attention_head.hpp"

#include "kernels/softmax.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace mcpclass::kernels {

void attention_head(KernelSet set, const float* q, const float* k, const float* v,
                    dnnl::memory::dim ld, std::size_t n, std::size_t dh, float scale, float* scores,
                    dnnl::memory::dim ld_scores, float* out, dnnl::memory::dim ld_out,
                    std::size_t window) {
  const auto rows = static_cast<dnnl::memory::dim>(n);
  const auto width = static_cast<dnnl::memory::dim>(dh);
  dnnl::sgemm('N', 'T', rows, rows, width, scale, q, ld, k, ld, 0.0f, scores, ld_scores);
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t lo = i > window ? i - window : 0;
    const std::size_t hi = n - i > window ? i + window + 1 : n;
    softmax_row(set, scores + i * static_cast<std::size_t>(ld_scores), n, lo, hi);
  }
  dnnl::sgemm('N', 'N', rows, width, rows, 1.0f, scores, ld_scores, v, ld, 0.0f, out, ld_out);
}

void attention_heads(KernelSet set, const float* qkv, dnnl::memory::dim ld, std::size_t n,
                     std::size_t heads, std::size_t dh, float scale, float* out,
                     dnnl::memory::dim ld_out, std::size_t window) {
  const std::size_t w = heads * dh;
  const auto h_count = static_cast<std::int64_t>(heads);
#pragma omp parallel
  {
    std::vector<float> scores(n * n);
#pragma omp for schedule(static)
    for (std::int64_t h = 0; h < h_count; ++h) {
      const std::size_t col = static_cast<std::size_t>(h) * dh;
      attention_head(set, qkv + col, qkv + w + col, qkv + 2 * w + col, ld, n, dh, scale,
                     scores.data(), static_cast<dnnl::memory::dim>(n), out + col, ld_out, window);
    }
  }
}

}  // namespace mcpclass::kernels
