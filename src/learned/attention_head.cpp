#include "learned/attention_head.hpp"

#include <algorithm>
#include <cmath>

namespace mcpclass::learned::detail {

void attention_head(const float* q, const float* k, const float* v, dnnl::memory::dim ld,
                    std::size_t n, std::size_t dh, float scale, float* scores,
                    dnnl::memory::dim ld_scores, float* out, dnnl::memory::dim ld_out) {
  const auto rows = static_cast<dnnl::memory::dim>(n);
  const auto width = static_cast<dnnl::memory::dim>(dh);
  dnnl::sgemm('N', 'T', rows, rows, width, scale, q, ld, k, ld, 0.0f, scores, ld_scores);
  for (std::size_t i = 0; i < n; ++i) {
    float* row = scores + i * static_cast<std::size_t>(ld_scores);
    const float mx = *std::max_element(row, row + n);
    float sum = 0.0f;
    for (std::size_t j = 0; j < n; ++j) sum += (row[j] = std::exp(row[j] - mx));
    for (std::size_t j = 0; j < n; ++j) row[j] /= sum;
  }
  dnnl::sgemm('N', 'N', rows, width, rows, 1.0f, scores, ld_scores, v, ld, 0.0f, out, ld_out);
}

}  // namespace mcpclass::learned::detail
