#include "architectures/common/decoder_encoder.hpp"

#include "architectures/common/dense_weights.hpp"
#include "architectures/common/encoder_rows.hpp"
#include "kernels/activate.hpp"
#include "kernels/attention_head.hpp"
#include "kernels/rms_norm.hpp"

#include <omp.h>
#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <cmath>

namespace mcpclass::architectures {

std::vector<float> DecoderEncoder::take_norm(checkpoint::CheckpointTensors& file,
                                             const std::string& name, std::size_t width) const {
  auto w = file.take(name + ".weight", {checkpoint::shape_dim(width)});
  // Gemma3RMSNorm: x · (1 + weight) in float32, the same rounding as adding it here once.
  if (config_.gemma())
    for (auto& v : w) v = 1.0f + v;
  return w;
}

DecoderEncoder::DecoderEncoder(const DecoderConfig& config, checkpoint::CheckpointTensors& file,
                               const kernels::Compute& compute)
    : compute_(compute), config_(config) {
  const auto& c = config_;
  const std::size_t h = c.hidden, q = c.heads * c.head_dim, kv = c.kv_heads * c.head_dim;
  const std::string p = c.prefix.empty() ? "" : c.prefix + ".";
  embeddings_ = file.take(p + "embed_tokens.weight",
                          {checkpoint::shape_dim(c.vocab), checkpoint::shape_dim(h)});
  if (c.gemma()) {
    // Gemma3TextScaledWordEmbedding: × hidden_size ** 0.5 as a float32 tensor.
    const auto scale = static_cast<float>(std::sqrt(static_cast<double>(h)));
    for (auto& v : embeddings_) v *= scale;
  }
  for (std::size_t i = 0; i < c.layers; ++i) {
    const std::string l = p + "layers." + std::to_string(i) + ".";
    const std::string a = l + "self_attn.";
    Layer layer;
    layer.input_norm = take_norm(file, l + "input_layernorm", h);
    layer.qkv = take_concatenated_dense(file, compute, {a + "q_proj", a + "k_proj", a + "v_proj"},
                                        {q, kv, kv}, h, c.attention_bias);
    layer.q_norm = take_norm(file, a + "q_norm", c.head_dim);
    layer.k_norm = take_norm(file, a + "k_norm", c.head_dim);
    layer.attention_out = take_dense(file, compute, a + "o_proj", q, h, c.attention_bias);
    if (c.gemma()) {
      layer.post_attention_norm = take_norm(file, l + "post_attention_layernorm", h);
      layer.pre_mlp_norm = take_norm(file, l + "pre_feedforward_layernorm", h);
      layer.post_mlp_norm = take_norm(file, l + "post_feedforward_layernorm", h);
    } else {
      // Qwen3's post_attention_layernorm is the norm before the MLP.
      layer.pre_mlp_norm = take_norm(file, l + "post_attention_layernorm", h);
    }
    layer.gate_up = take_concatenated_dense(file, compute, {l + "mlp.gate_proj", l + "mlp.up_proj"},
                                            {c.intermediate, c.intermediate}, h, false);
    layer.down = take_dense(file, compute, l + "mlp.down_proj", c.intermediate, h, false);
    layer.window = c.window_of(i);
    layer.sliding = c.sliding_layer[i];
    layers_.push_back(std::move(layer));
  }
  final_norm_ = take_norm(file, p + "norm", h);
  full_rope_ = kernels::rope_frequencies(c.full_rope, c.head_dim);
  sliding_rope_ = kernels::rope_frequencies(c.sliding_rope, c.head_dim);
}

std::size_t DecoderEncoder::parameters() const {
  std::size_t n = embeddings_.size() + final_norm_.size();
  for (const auto& l : layers_)
    n += l.input_norm.size() + l.q_norm.size() + l.k_norm.size() + l.post_attention_norm.size() +
         l.pre_mlp_norm.size() + l.post_mlp_norm.size() + l.qkv.parameters() +
         l.attention_out.parameters() + l.gate_up.parameters() + l.down.parameters();
  return n;
}

HiddenStates DecoderEncoder::hidden_states(std::span<const BertInput> inputs,
                                           std::size_t threads) const {
  // oneDNN runs on OpenMP: this thread's team size is its own setting, so it is set per call.
  omp_set_num_threads(static_cast<int>(std::max<std::size_t>(threads, 1)));
  const auto& c = config_;
  const std::size_t w = c.hidden, dh = c.head_dim;
  const std::size_t qw = c.heads * dh, kvw = c.kv_heads * dh, qkvw = qw + 2 * kvw;
  for (const auto& in : inputs) check_text_length(in.ids.size(), c.max_tokens());
  HiddenStates out;
  const std::size_t rows = lay_out_rows(out, inputs, w);
  auto& x = out.values;
  x.assign(rows * w, 0.0f);
  std::size_t longest = 0;
  for (std::size_t b = 0; b < inputs.size(); ++b) {
    longest = std::max(longest, inputs[b].ids.size());
    for (std::size_t t = 0; t < inputs[b].ids.size(); ++t) {
      const auto id = inputs[b].ids[t];
      check_token_id(id, c.vocab);
      std::copy_n(embeddings_.data() + static_cast<std::size_t>(id) * w, w,
                  x.data() + (out.first_row[b] + t) * w);
    }
  }
  const auto full_table = kernels::rope_table(full_rope_, longest);
  const auto sliding_table = kernels::rope_table(sliding_rope_, longest);
  std::vector<float> normed(rows * w), qkv(rows * qkvw), context(rows * qw, 0.0f);
  std::vector<float> projected(rows * w), wide(rows * 2 * c.intermediate);
  std::vector<float> gated(rows * c.intermediate);
  const auto add = [&] {
    for (std::size_t i = 0; i < x.size(); ++i) x[i] += projected[i];
  };
  for (const auto& layer : layers_) {
    kernels::rms_norm(layer.input_norm, c.norm_eps, x.data(), rows, w, 1, normed.data());
    kernels::linear(layer.qkv, normed.data(), rows, qkv.data());
    kernels::rms_norm(layer.q_norm, c.norm_eps, qkv.data(), rows, qkvw, c.heads, qkv.data());
    kernels::rms_norm(layer.k_norm, c.norm_eps, qkv.data() + qw, rows, qkvw, c.kv_heads,
                      qkv.data() + qw);
    const auto& table = layer.sliding ? sliding_table : full_table;
    for (std::size_t b = 0; b < inputs.size(); ++b) {
      const std::size_t n = inputs[b].ids.size();
      float* base = qkv.data() + out.first_row[b] * qkvw;
      kernels::apply_rope(table, base, qkvw, n, c.heads, dh);
      kernels::apply_rope(table, base + qw, qkvw, n, c.kv_heads, dh);
      kernels::grouped_attention_heads(
          compute_.kernels, base, static_cast<dnnl::memory::dim>(qkvw), n, c.heads, c.kv_heads, dh,
          c.attention_scale, context.data() + out.first_row[b] * qw,
          static_cast<dnnl::memory::dim>(qw), layer.window, !c.bidirectional);
    }
    kernels::linear(layer.attention_out, context.data(), rows, projected.data());
    if (!layer.post_attention_norm.empty())
      kernels::rms_norm(layer.post_attention_norm, c.norm_eps, projected.data(), rows, w, 1,
                        projected.data());
    add();
    kernels::rms_norm(layer.pre_mlp_norm, c.norm_eps, x.data(), rows, w, 1, normed.data());
    kernels::linear(layer.gate_up, normed.data(), rows, wide.data());
    // [gate | up] per row: act(gate) · up, the gated form ModernBERT's GeGLU computes too.
    kernels::gated_activate(compute_.kernels, c.activation, wide.data(), rows, c.intermediate,
                            gated.data());
    kernels::linear(layer.down, gated.data(), rows, projected.data());
    if (!layer.post_mlp_norm.empty())
      kernels::rms_norm(layer.post_mlp_norm, c.norm_eps, projected.data(), rows, w, 1,
                        projected.data());
    add();
  }
  if (c.final_norm) kernels::rms_norm(final_norm_, c.norm_eps, x.data(), rows, w, 1, x.data());
  return out;
}

}  // namespace mcpclass::architectures
