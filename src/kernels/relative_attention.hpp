// Internal: DeBERTa's disentangled self-attention of one text over its n tokens
// (modeling_deberta_v2 .py's DisentangledSelfAttention): the content score of every query and key
// plus two relative- position scores — content to position (query i · the position key of the
// distance i − j) and position to content (key j · the position query of that distance) — softmax,
// then the values. The position keys and queries are the model's relative embeddings projected once
// at load; each distance's row is given per text. oneDNN's sgemm for the products, softmax.hpp for
// the rows.
#pragma once

#include "kernels/cpu_features.hpp"

#include <oneapi/dnnl/dnnl.hpp>

#include <cstddef>

namespace mcpclass::kernels {

/// The position side of disentangled attention. `pos_key` / `pos_query`: rows of heads × dh
/// values `ld` apart (nullptr: no c2p / no p2c term); `row_of[o + n − 1]`: the row of distance
/// o = i − j, for o in [−(n − 1), n − 1] (the bucketed, clamped distance + span).
struct RelativePositions {
  const float* pos_key = nullptr;
  const float* pos_query = nullptr;
  dnnl::memory::dim ld = 0;
  const std::size_t* row_of = nullptr;
};

/// Every head of one text's disentangled self-attention: queries, keys and values of `heads` heads
/// of dh values side by side in rows of `qkv` ([queries | keys | values], rows `ld` apart); score
/// (i, j) = scale · (q_i · k_j + q_i · pos_key[row_of(i − j)] + k_j · pos_query[row_of(i − j)]);
/// head h's context into columns h·dh… of `out` (rows `ld_out` apart). The heads are shared
/// among the calling thread's OpenMP team, each computed on one thread, so the result does not
/// depend on the thread count. Thread-safety: pure.
void disentangled_attention_heads(KernelSet set, const float* qkv, dnnl::memory::dim ld,
                                  std::size_t n, std::size_t heads, std::size_t dh, float scale,
                                  const RelativePositions& positions, float* out,
                                  dnnl::memory::dim ld_out);

}  // namespace mcpclass::kernels
