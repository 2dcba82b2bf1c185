// Internal: one head of scaled dot-product self-attention over one text's n tokens, as the
// native encoders compute it (oneDNN's sgemm for both products, the max-subtracted softmax of
// softmax.hpp with the model's kernel set).
#pragma once

#include "kernels/cpu_features.hpp"

#include <oneapi/dnnl/dnnl.hpp>

#include <cstddef>
#include <limits>

namespace mcpclass::kernels {

/// out[n × dh] = softmax(scale · q kᵀ) v, where q, k, v are n rows of dh values `ld` apart;
/// `scores` has room for n rows `ld_scores` ≥ n apart; `out` rows are `ld_out` apart. With a
/// `window`, query i attends only to keys j with |i − j| ≤ window (sliding-window attention: the
/// others get weight 0, as an additive finfo.min mask gives them after softmax). `causal`: query
/// i attends only to keys j ≤ i as well (a decoder's mask; with a window, i − window ≤ j ≤ i).
void attention_head(KernelSet set, const float* q, const float* k, const float* v,
                    dnnl::memory::dim ld, std::size_t n, std::size_t dh, float scale, float* scores,
                    dnnl::memory::dim ld_scores, float* out, dnnl::memory::dim ld_out,
                    std::size_t window = std::numeric_limits<std::size_t>::max(),
                    bool causal = false);

/// Every head of one text's self-attention: `heads` heads of dh values side by side in rows of
/// `qkv` ([queries | keys | values], each heads × dh wide, rows `ld` apart), the context of head
/// h into columns h·dh… of `out`. The heads are shared among the calling thread's OpenMP team,
/// each computed on one thread as attention_head() computes it alone, so the result does not
/// depend on the thread count. Thread-safety: pure.
void attention_heads(KernelSet set, const float* qkv, dnnl::memory::dim ld, std::size_t n,
                     std::size_t heads, std::size_t dh, float scale, float* out,
                     dnnl::memory::dim ld_out,
                     std::size_t window = std::numeric_limits<std::size_t>::max());

/// attention_heads() with grouped-query attention (transformers' repeat_kv): rows of `qkv` are
/// [queries (heads × dh) | keys (kv_heads × dh) | values (kv_heads × dh)], and query head h reads
/// key and value head h / (heads / kv_heads); `heads` must be a multiple of `kv_heads`.
/// `causal` as in attention_head(). Thread-safety: pure.
void grouped_attention_heads(KernelSet set, const float* qkv, dnnl::memory::dim ld, std::size_t n,
                             std::size_t heads, std::size_t kv_heads, std::size_t dh, float scale,
                             float* out, dnnl::memory::dim ld_out, std::size_t window, bool causal);

}  // namespace mcpclass::kernels
