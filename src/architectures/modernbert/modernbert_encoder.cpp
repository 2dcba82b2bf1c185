#include "architectures/modernbert/modernbert_encoder.hpp"

#include "architectures/common/dense_weights.hpp"
#include "architectures/common/encoder_rows.hpp"
#include "kernels/activate.hpp"
#include "kernels/attention_head.hpp"
#include "mcpclass/classify/errors.hpp"

#include <omp.h>
#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

namespace mcpclass::architectures {

ModernBertCheckpoint read_modernbert_checkpoint(const std::string& dir, BertHead head,
                                                const std::string& adapter_dir,
                                                const checkpoint::CheckpointProgress& progress) {
  auto config = read_modernbert_config(dir, head);
  return {std::move(config), checkpoint::read_checkpoint_tensors(dir, adapter_dir, progress)};
}

void require_every_tensor_taken(const checkpoint::CheckpointTensors& file,
                                const ModernBertConfig& c) {
  require_every_tensor_taken(file, c.architecture, c.file,
                             "norm_bias, attention_bias, mlp_bias, classifier_bias and "
                             "num_hidden_layers");
}

ModernBertEncoder::ModernBertEncoder(const ModernBertConfig& config,
                                     checkpoint::CheckpointTensors& file,
                                     const kernels::Compute& compute)
    : compute_(compute), config_(config) {
  const auto& c = config_;
  const std::size_t h = c.hidden;
  auto norm = [&](const std::string& name) { return take_norm(file, name, h, c.norm_bias); };
  const std::string p = c.prefix.empty() ? "" : c.prefix + ".";
  embeddings_ = file.take(p + "embeddings.tok_embeddings.weight",
                          {static_cast<std::int64_t>(c.vocab), static_cast<std::int64_t>(h)});
  embedding_norm_ = norm(p + "embeddings.norm");
  for (std::size_t i = 0; i < c.layers; ++i) {
    const std::string l = p + "layers." + std::to_string(i) + ".";
    Layer layer;
    if (i > 0) layer.attention_norm = norm(l + "attn_norm");
    layer.qkv = take_dense(file, compute, l + "attn.Wqkv", h, 3 * h, c.attention_bias);
    layer.attention_out = take_dense(file, compute, l + "attn.Wo", h, h, c.attention_bias);
    layer.mlp_norm = norm(l + "mlp_norm");
    layer.mlp_in = take_dense(file, compute, l + "mlp.Wi", h, 2 * c.intermediate, c.mlp_bias);
    layer.mlp_out = take_dense(file, compute, l + "mlp.Wo", c.intermediate, h, c.mlp_bias);
    layer.global = c.global_layer[i];
    layers_.push_back(std::move(layer));
  }
  final_norm_ = norm(p + "final_norm");
  global_rope_ = kernels::rope_frequencies(c.global_rope, c.head_dim());
  local_rope_ = kernels::rope_frequencies(c.local_rope, c.head_dim());
}

std::size_t ModernBertEncoder::parameters() const {
  std::size_t n = embeddings_.size() + embedding_norm_.parameters() + final_norm_.parameters();
  for (const auto& l : layers_)
    n += l.attention_norm.parameters() + l.qkv.parameters() + l.attention_out.parameters() +
         l.mlp_norm.parameters() + l.mlp_in.parameters() + l.mlp_out.parameters();
  return n;
}

// RoPE on each text's queries and keys (positions from 0 at its first token), then scaled
// dot-product attention of each text over its own tokens, within the window on local layers.
void ModernBertEncoder::attention(const Layer& layer, std::vector<float>& qkv,
                                  std::span<const BertInput> inputs,
                                  const std::vector<std::size_t>& first_row,
                                  std::vector<float>& context) const {
  const std::size_t w = config_.hidden, heads = config_.heads, dh = config_.head_dim();
  const float scale = 1.0f / std::sqrt(static_cast<float>(dh));
  const std::size_t window =
      layer.global ? std::numeric_limits<std::size_t>::max() : config_.local_attention / 2;
  std::size_t longest = 0;
  for (const auto& in : inputs) longest = std::max(longest, in.ids.size());
  const auto table = kernels::rope_table(layer.global ? global_rope_ : local_rope_, longest);
  for (std::size_t b = 0; b < inputs.size(); ++b) {
    const std::size_t n = inputs[b].ids.size();
    float* base = qkv.data() + first_row[b] * 3 * w;
    kernels::apply_rope(table, base, 3 * w, n, heads, dh);      // queries
    kernels::apply_rope(table, base + w, 3 * w, n, heads, dh);  // keys
    kernels::attention_heads(compute_.kernels, base, static_cast<dnnl::memory::dim>(3 * w), n,
                             heads, dh, scale, context.data() + first_row[b] * w,
                             static_cast<dnnl::memory::dim>(w), window);
  }
}

HiddenStates ModernBertEncoder::hidden_states(std::span<const BertInput> inputs,
                                              std::size_t threads,
                                              const EncoderDeltas* deltas) const {
  // oneDNN runs on OpenMP: this thread's team size is its own setting, so it is set per call.
  omp_set_num_threads(static_cast<int>(std::max<std::size_t>(threads, 1)));
  const auto& c = config_;
  const std::size_t w = c.hidden;
  for (const auto& in : inputs) check_text_length(in.ids.size(), c.max_tokens());
  HiddenStates out;
  const std::size_t rows = lay_out_rows(out, inputs, w);
  auto& x = out.values;
  x.assign(rows * w, 0.0f);
  for (std::size_t b = 0; b < inputs.size(); ++b)
    for (std::size_t t = 0; t < inputs[b].ids.size(); ++t) {
      const auto id = inputs[b].ids[t];
      check_token_id(id, c.vocab);
      std::copy_n(embeddings_.data() + static_cast<std::size_t>(id) * w, w,
                  x.data() + (out.first_row[b] + t) * w);
    }
  kernels::layer_norm(compute_.kernels, embedding_norm_, c.norm_eps, x.data(), rows);
  std::vector<float> normed(rows * w), qkv(rows * 3 * w), context(rows * w, 0.0f);
  std::vector<float> projected(rows * w), wide(rows * 2 * c.intermediate);
  std::vector<float> gated(rows * c.intermediate);
  for (std::size_t l = 0; l < layers_.size(); ++l) {
    const auto& layer = layers_[l];
    const float* attention_input = x.data();
    if (!layer.attention_norm.weight.empty()) {
      kernels::residual_norm(compute_.kernels, layer.attention_norm, c.norm_eps, x.data(), nullptr,
                             rows, normed.data());
      attention_input = normed.data();
    }
    kernels::linear_adapted(layer.qkv, deltas_of(deltas, l, kAttentionIn), attention_input, rows,
                            qkv.data());
    attention(layer, qkv, inputs, out.first_row, context);
    kernels::linear_adapted(layer.attention_out, deltas_of(deltas, l, kAttentionOut),
                            context.data(), rows, projected.data());
    kernels::residual_norm(compute_.kernels, layer.mlp_norm, c.norm_eps, x.data(), projected.data(),
                           rows, normed.data());
    kernels::linear_adapted(layer.mlp_in, deltas_of(deltas, l, kFeedForwardIn), normed.data(), rows,
                            wide.data());
    // GeGLU: Wi's output is [input | gate] (torch's chunk(2, dim=-1)), in one pass.
    kernels::gated_activate(compute_.kernels, c.activation, wide.data(), rows, c.intermediate,
                            gated.data());
    kernels::linear_adapted(layer.mlp_out, deltas_of(deltas, l, kFeedForwardOut), gated.data(),
                            rows, projected.data());
    for (std::size_t i = 0; i < x.size(); ++i) x[i] += projected[i];
  }
  if (c.final_norm) kernels::layer_norm(compute_.kernels, final_norm_, c.norm_eps, x.data(), rows);
  return out;
}

}  // namespace mcpclass::architectures

namespace mcpclass::architectures {

std::optional<ModuleSlot> ModernBertEncoder::locate(const std::string& module) const {
  const auto& c = config_;
  const auto m = layer_module(
      module, (c.prefix.empty() ? std::string() : c.prefix + ".") + "layers.", layers_.size());
  if (!m) return std::nullopt;
  const std::size_t h = c.hidden, layer = m->layer;
  if (m->rest == "attn.Wqkv") return ModuleSlot{layer, kAttentionIn, 0, h, 3 * h};
  if (m->rest == "attn.Wo") return ModuleSlot{layer, kAttentionOut, 0, h, h};
  if (m->rest == "mlp.Wi") return ModuleSlot{layer, kFeedForwardIn, 0, h, 2 * c.intermediate};
  if (m->rest == "mlp.Wo") return ModuleSlot{layer, kFeedForwardOut, 0, c.intermediate, h};
  return std::nullopt;
}

}  // namespace mcpclass::architectures
