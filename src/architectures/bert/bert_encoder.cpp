#include "architectures/bert/bert_encoder.hpp"

#include "architectures/common/encoder_rows.hpp"

#include "architectures/common/dense_weights.hpp"
#include "kernels/attention_head.hpp"
#include "mcpclass/classify/errors.hpp"

#include <omp.h>
#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <cmath>

namespace mcpclass::architectures {

BertCheckpoint read_bert_checkpoint(const std::string& dir, BertHead head,
                                    const std::string& adapter_dir,
                                    const checkpoint::CheckpointProgress& progress) {
  auto config = read_bert_config(dir, head);
  return {std::move(config), checkpoint::read_checkpoint_tensors(dir, adapter_dir, progress)};
}

BertEncoder::BertEncoder(const BertConfig& config, checkpoint::CheckpointTensors& file,
                         const kernels::Compute& compute)
    : compute_(compute), config_(config) {
  const auto& c = config_;
  const std::string p = c.prefix.empty() ? std::string() : c.prefix + ".";
  const auto h = checkpoint::shape_dim(c.hidden);
  auto norm = [&](const std::string& name) { return take_norm(file, name, c.hidden, true); };
  word_ = file.take(p + "embeddings.word_embeddings.weight", {checkpoint::shape_dim(c.vocab), h});
  position_ = file.take(p + "embeddings.position_embeddings.weight",
                        {checkpoint::shape_dim(c.max_positions), h});
  token_type_ = file.take(p + "embeddings.token_type_embeddings.weight",
                          {checkpoint::shape_dim(c.type_vocab), h});
  embedding_norm_ = norm(p + "embeddings.LayerNorm");
  for (std::size_t i = 0; i < c.layers; ++i) {
    const std::string l = p + "encoder.layer." + std::to_string(i) + ".";
    Layer layer;
    const std::string self = l + "attention.self.";
    layer.qkv = take_stacked_dense(file, compute, {self + "query", self + "key", self + "value"},
                                   c.hidden, c.hidden);
    layer.attention_out =
        take_dense(file, compute, l + "attention.output.dense", c.hidden, c.hidden);
    layer.attention_norm = norm(l + "attention.output.LayerNorm");
    layer.intermediate =
        take_dense(file, compute, l + "intermediate.dense", c.hidden, c.intermediate);
    layer.output = take_dense(file, compute, l + "output.dense", c.intermediate, c.hidden);
    layer.output_norm = norm(l + "output.LayerNorm");
    layers_.push_back(std::move(layer));
  }
}

std::size_t BertEncoder::parameters() const {
  std::size_t n =
      word_.size() + position_.size() + token_type_.size() + embedding_norm_.parameters();
  for (const auto& l : layers_) n += l.parameters();
  return n;
}

// Word + position + token-type embeddings of every token, each text from a multiple of
// kRowBlock rows on; padding rows are zero.
std::vector<float> BertEncoder::embed(std::span<const BertInput> inputs, std::size_t rows) const {
  const auto& c = config_;
  const std::size_t w = c.hidden;
  std::vector<float> x(rows * w, 0.0f);
  std::size_t start = 0;
  for (const auto& in : inputs) {
    std::size_t r = start;
    start += kernels::padded_rows(in.ids.size());
    check_text_length(in.ids.size(), c.max_tokens());
    // RoBERTa numbers non-padding tokens from pad_token_id + 1 and gives padding tokens
    // pad_token_id itself (create_position_ids_from_input_ids); BERT counts from 0.
    std::size_t counted = 0;
    for (std::size_t t = 0; t < in.ids.size(); ++t, ++r) {
      const auto id = in.ids[t];
      check_token_id(id, c.vocab);
      // A one-type model (RoBERTa, XLM-R) reads every type as 0: transformers does not pass
      // token_type_ids to it, whatever a pair template numbers the second text.
      const std::size_t type = t < in.type_ids.size() && c.type_vocab > 1 ? in.type_ids[t] : 0;
      check_token_type(type, c.type_vocab);
      std::size_t pos = t;
      if (c.family == BertFamily::roberta) {
        const auto pad = static_cast<std::size_t>(c.pad_token_id);
        pos = id == c.pad_token_id ? pad : pad + ++counted;
      }
      float* row = x.data() + r * w;
      const float* word = word_.data() + static_cast<std::size_t>(id) * w;
      const float* position = position_.data() + pos * w;
      const float* token_type = token_type_.data() + type * w;
      for (std::size_t j = 0; j < w; ++j) row[j] = word[j] + token_type[j] + position[j];
    }
  }
  layer_norm(embedding_norm_, x.data(), rows);
  return x;
}

// Scaled dot-product attention of each text over its own tokens: a text's keys are exactly its
// tokens, which is what transformers' additive padding mask leaves after softmax.
void BertEncoder::attention(const std::vector<float>& qkv, std::span<const BertInput> inputs,
                            std::vector<float>& context) const {
  using dim = dnnl::memory::dim;
  const std::size_t w = config_.hidden, heads = config_.heads, dh = w / heads;
  const float scale = 1.0f / std::sqrt(static_cast<float>(dh));
  std::size_t offset = 0;
  for (const auto& in : inputs) {
    kernels::attention_heads(compute_.kernels, qkv.data() + offset * 3 * w, static_cast<dim>(3 * w),
                             in.ids.size(), heads, dh, scale, context.data() + offset * w,
                             static_cast<dim>(w));
    offset += kernels::padded_rows(in.ids.size());
  }
}

HiddenStates BertEncoder::hidden_states(std::span<const BertInput> inputs, std::size_t threads,
                                        const EncoderDeltas* deltas) const {
  // oneDNN runs on OpenMP: this thread's team size is its own setting, so it is set per call.
  omp_set_num_threads(static_cast<int>(std::max<std::size_t>(threads, 1)));
  HiddenStates out;
  const std::size_t rows = lay_out_rows(out, inputs, config_.hidden);
  auto x = embed(inputs, rows);
  PostNormScratch scratch(rows, config_.hidden, config_.intermediate);
  for (std::size_t l = 0; l < layers_.size(); ++l)
    run_post_norm_layer(
        layers_[l], compute_.kernels, config_.layer_norm_eps, config_.activation, rows, scratch, x,
        [&](const std::vector<float>& qkv, std::vector<float>& context) {
          attention(qkv, inputs, context);
        },
        deltas != nullptr && l < deltas->size() ? &(*deltas)[l] : nullptr);
  out.values = std::move(x);
  return out;
}

}  // namespace mcpclass::architectures

namespace mcpclass::architectures {

std::optional<ModuleSlot> BertEncoder::locate(const std::string& module) const {
  const auto& c = config_;
  const auto m =
      layer_module(module, (c.prefix.empty() ? std::string() : c.prefix + ".") + "encoder.layer.",
                   layers_.size());
  if (!m) return std::nullopt;
  return post_norm_slot(*m, c.hidden, c.intermediate, "query", "key", "value");
}

}  // namespace mcpclass::architectures
