// Internal: one head of scaled dot-product self-attention over one text's n tokens, as the
// native encoders compute it (oneDNN's sgemm for both products, a max-subtracted softmax).
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <cstddef>

namespace mcpclass::learned::detail {

/// out[n × dh] = softmax(scale · q kᵀ) v, where q, k, v are n rows of dh values `ld` apart;
/// `scores` has room for n rows `ld_scores` ≥ n apart; `out` rows are `ld_out` apart.
void attention_head(const float* q, const float* k, const float* v, dnnl::memory::dim ld,
                    std::size_t n, std::size_t dh, float scale, float* scores,
                    dnnl::memory::dim ld_scores, float* out, dnnl::memory::dim ld_out);

}  // namespace mcpclass::learned::detail
