// Internal: a decoder-only text model as an encoder (transformers' Gemma3TextModel in
// modeling_gemma3.py and Qwen3Model in modeling_qwen3.py, eval mode), computed natively on the
// same kernels as the encoders: token embeddings (× √hidden for Gemma); per layer (pre-norm)
// RMSNorm, grouped-query self-attention — q_proj, k_proj, v_proj as one product, q_norm and
// k_norm per head, RoPE of the layer's type, the config's scaling, causal or bidirectional and
// on sliding layers within the window — o_proj (then Gemma's post_attention_layernorm),
// residual; RMSNorm, the gated MLP down(act(gate(x)) · up(x)) (then Gemma's
// post_feedforward_layernorm), residual; the final norm. Gemma's RMSNorm scales by
// (1 + weight), folded into the weight at load. Every text is computed on its own tokens,
// positions from 0: with a padded batch transformers gives a text's real tokens the same
// result (bidirectional: the padding is masked; causal with left padding: RoPE's scores depend
// on position differences alone).
#pragma once

#include "architectures/bert/bert_encoder.hpp"
#include "architectures/common/decoder_config.hpp"
#include "architectures/common/hidden_states.hpp"
#include "checkpoint/checkpoint_files.hpp"
#include "kernels/dense_rows.hpp"
#include "kernels/rope.hpp"

#include <cstddef>
#include <span>
#include <vector>

namespace mcpclass::architectures {

/// Thread-safety: immutable after construction; hidden_states() may be called concurrently.
class DecoderEncoder {
 public:
  /// Takes the model's tensors (under config.prefix) out of `file`: config.layers of them, so a
  /// config cut short (2D Matryoshka) leaves the later layers' tensors in `file`. Throws
  /// ClassifyError naming the tensor and its file for a missing, misshapen or non-finite tensor.
  /// `compute`: the kernel set and the precision of the layers' products.
  DecoderEncoder(const DecoderConfig& config, checkpoint::CheckpointTensors& file,
                 const kernels::Compute& compute);

  /// Weights held (every tensor's elements).
  std::size_t parameters() const;

  /// The final hidden state (after the final norm when config.final_norm) of every token. A
  /// batch gives every text exactly (bit for bit) its single-text result. Texts must be
  /// non-empty and at most config.max_tokens() long; throws ClassifyError for an id the model
  /// lacks. Token types are ignored. `threads`: OpenMP threads of the products.
  HiddenStates hidden_states(std::span<const BertInput> inputs, std::size_t threads) const;

 private:
  struct Layer {
    std::vector<float> input_norm, q_norm, k_norm, post_attention_norm;
    std::vector<float> pre_mlp_norm, post_mlp_norm;  ///< post_mlp_norm: Gemma's alone
    kernels::Dense qkv, attention_out, gate_up, down;
    std::size_t window = 0;
    bool sliding = false;
  };

  std::vector<float> take_norm(checkpoint::CheckpointTensors& file, const std::string& name,
                               std::size_t width) const;

  kernels::Compute compute_;
  DecoderConfig config_;
  kernels::RopeFrequencies full_rope_, sliding_rope_;
  std::vector<float> embeddings_;
  std::vector<Layer> layers_;
  std::vector<float> final_norm_;
};

}  // namespace mcpclass::architectures
