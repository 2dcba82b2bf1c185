// Internal: rotary position embeddings (RoPE) as transformers computes them: the inverse
// frequencies of the default, linear and YaRN rope types (modeling_rope_utils.py) and their
// application to a head's query and key with rotate_half (the GPT-NeoX layout: dimension i pairs
// with i + head_dim/2). Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <vector>

namespace mcpclass::kernels {

/// One RoPE's parameters: a `rope_parameters` entry, or rope_theta plus `rope_scaling`.
struct RopeSettings {
  enum class Type { plain, linear, yarn };
  Type type = Type::plain;
  double theta = 10000.0;
  // linear: the default frequencies divided by factor (_compute_linear_scaling_rope_parameters).
  // YaRN (_compute_yarn_parameters): attention_factor < 0 means the default
  // 0.1 · ln(factor) + 1 (or mscale / mscale_all_dim when both are given).
  double factor = 1.0;
  double original_max_positions = 0.0;
  double attention_factor = -1.0, mscale = 0.0, mscale_all_dim = 0.0;
  double beta_fast = 32.0, beta_slow = 1.0;
  bool truncate = true;
};

/// The inverse frequencies (head_dim / 2 values) and the factor cos and sin are scaled by.
struct RopeFrequencies {
  std::vector<float> inverse;
  float attention_scaling = 1.0f;
};

RopeFrequencies rope_frequencies(const RopeSettings& s, std::size_t head_dim);

/// cos and sin of positions 0..tokens−1: `tokens` rows of head_dim / 2 values each, already
/// scaled by attention_scaling.
struct RopeTable {
  std::vector<float> cos, sin;
};

RopeTable rope_table(const RopeFrequencies& f, std::size_t tokens);

/// Rotates `tokens` rows of `heads` heads of head_dim values (row stride `ld`, head h at
/// h · head_dim) in place: x · cos + rotate_half(x) · sin at each row's position.
void apply_rope(const RopeTable& t, float* x, std::size_t ld, std::size_t tokens, std::size_t heads,
                std::size_t head_dim);

}  // namespace mcpclass::kernels
