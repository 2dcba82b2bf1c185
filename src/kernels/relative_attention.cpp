#include "kernels/relative_attention.hpp"

#include "kernels/softmax.hpp"

#include <cstdint>
#include <vector>

namespace mcpclass::kernels {

namespace {

using dim = dnnl::memory::dim;

// rows[o + n − 1] ← table[row_of[o + n − 1]] (dh values of the head at column `col`): the
// position rows of every distance, contiguous for one product.
void gather(const float* table, dim ld, std::size_t col, const std::size_t* row_of,
            std::size_t distances, std::size_t dh, float* rows) {
  for (std::size_t o = 0; o < distances; ++o) {
    const float* from = table + row_of[o] * static_cast<std::size_t>(ld) + col;
    for (std::size_t k = 0; k < dh; ++k) rows[o * dh + k] = from[k];
  }
}

}  // namespace

void disentangled_attention_heads(KernelSet set, const float* qkv, dim ld, std::size_t n,
                                  std::size_t heads, std::size_t dh, float scale,
                                  const RelativePositions& positions, float* out, dim ld_out) {
  if (n == 0) return;
  const std::size_t w = heads * dh, distances = 2 * n - 1;
  const auto rows = static_cast<dim>(n), width = static_cast<dim>(dh);
  const auto span = static_cast<dim>(distances);
  const auto h_count = static_cast<std::int64_t>(heads);
  // A distance's score of (i, j) sits at column i − j + n − 1 of query i's row (c2p) and of key
  // j's row (p2c): one product against the 2n − 1 distance rows each, instead of a gather from
  // a product against every relative embedding (2 × 256 rows in DeBERTa-v3) as transformers does.
#pragma omp parallel
  {
    std::vector<float> scores(n * n), position_rows(distances * dh);
    std::vector<float> c2p(positions.pos_key ? n * distances : 0);
    std::vector<float> p2c(positions.pos_query ? n * distances : 0);
#pragma omp for schedule(static)
    for (std::int64_t h = 0; h < h_count; ++h) {
      const std::size_t col = static_cast<std::size_t>(h) * dh;
      const float *q = qkv + col, *k = qkv + w + col, *v = qkv + 2 * w + col;
      dnnl::sgemm('N', 'T', rows, rows, width, scale, q, ld, k, ld, 0.0f, scores.data(), rows);
      if (positions.pos_key != nullptr) {
        gather(positions.pos_key, positions.ld, col, positions.row_of, distances, dh,
               position_rows.data());
        dnnl::sgemm('N', 'T', rows, span, width, scale, q, ld, position_rows.data(), width, 0.0f,
                    c2p.data(), span);
      }
      if (positions.pos_query != nullptr) {
        gather(positions.pos_query, positions.ld, col, positions.row_of, distances, dh,
               position_rows.data());
        dnnl::sgemm('N', 'T', rows, span, width, scale, k, ld, position_rows.data(), width, 0.0f,
                    p2c.data(), span);
      }
      for (std::size_t i = 0; i < n; ++i) {
        float* row = scores.data() + i * n;
        for (std::size_t j = 0; j < n; ++j) {
          const std::size_t o = i + n - 1 - j;
          float bias = 0.0f;
          if (!c2p.empty()) bias += c2p[i * distances + o];
          if (!p2c.empty()) bias += p2c[j * distances + o];
          row[j] += bias;
        }
        softmax_row(set, row, n, 0, n);
      }
      dnnl::sgemm('N', 'N', rows, width, rows, 1.0f, scores.data(), rows, v, ld, 0.0f, out + col,
                  ld_out);
    }
  }
}

}  // namespace mcpclass::kernels
