#include "architectures/deberta/deberta_encoder.hpp"

#include "architectures/common/dense_weights.hpp"
#include "architectures/common/encoder_rows.hpp"
#include "kernels/relative_attention.hpp"
#include "mcpclass/classify/errors.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <string_view>

namespace mcpclass::architectures {

namespace {

constexpr const char* kPrefix = "deberta.";

// rows × in values through `d` (float32 or the model's precision) and a task's updates of it,
// rows padded to a block.
std::vector<float> project(const kernels::Dense& d, const std::vector<float>& x, std::size_t rows,
                           std::span<const kernels::LowRank> deltas = {}) {
  const std::size_t padded = kernels::padded_rows(rows);
  std::vector<float> in(padded * d.in, 0.0f), out(padded * d.out);
  std::copy(x.begin(), x.end(), in.begin());
  kernels::linear_adapted(d, deltas, in.data(), padded, out.data());
  out.resize(rows * d.out);
  return out;
}

// Columns [first, first + width) of rows × stride values.
std::vector<float> columns(const std::vector<float>& x, std::size_t rows, std::size_t stride,
                           std::size_t first, std::size_t width) {
  std::vector<float> out(rows * width);
  for (std::size_t r = 0; r < rows; ++r)
    std::copy_n(x.data() + r * stride + first, width, out.data() + r * width);
  return out;
}

}  // namespace

DebertaCheckpoint read_deberta_checkpoint(const std::string& dir, BertHead head,
                                          const std::string& adapter_dir,
                                          const checkpoint::CheckpointProgress& progress) {
  auto config = read_deberta_config(dir, head);
  return {std::move(config), checkpoint::read_checkpoint_tensors(dir, adapter_dir, progress)};
}

DebertaEncoder::DebertaEncoder(const DebertaConfig& config, checkpoint::CheckpointTensors& file,
                               const kernels::Compute& compute)
    : compute_(compute), config_(config) {
  const auto& c = config_;
  const std::string p = kPrefix;
  const auto e = checkpoint::shape_dim(c.embedding);
  auto norm = [&](const std::string& name) { return take_norm(file, name, c.hidden, true); };
  word_ = file.take(p + "embeddings.word_embeddings.weight", {checkpoint::shape_dim(c.vocab), e});
  if (c.position_biased_input)
    position_ = file.take(p + "embeddings.position_embeddings.weight",
                          {checkpoint::shape_dim(c.max_positions), e});
  if (c.type_vocab > 0)
    token_type_ = file.take(p + "embeddings.token_type_embeddings.weight",
                            {checkpoint::shape_dim(c.type_vocab), e});
  if (c.embedding != c.hidden)
    embed_proj_ =
        take_dense(file, compute, p + "embeddings.embed_proj", c.embedding, c.hidden, false);
  embedding_norm_ = norm(p + "embeddings.LayerNorm");
  std::vector<float> relative;
  const std::size_t positions = 2 * c.span();
  if (c.relative_attention) {
    relative = file.take(p + "encoder.rel_embeddings.weight",
                         {checkpoint::shape_dim(positions), checkpoint::shape_dim(c.hidden)});
    if (c.rel_norm) {
      const auto n = norm(p + "encoder.LayerNorm");
      kernels::layer_norm(compute.kernels, n, c.layer_norm_eps, relative.data(), positions);
    }
  }
  // Kept for the tasks over this encoder that adapt the query or key projection.
  if (c.relative_attention && c.share_att_key && (c.c2p || c.p2c)) relative_ = relative;
  for (std::size_t i = 0; i < c.layers; ++i) {
    const std::string l = p + "encoder.layer." + std::to_string(i) + ".";
    const std::string self = l + "attention.self.";
    Layer layer;
    layer.dense.qkv = take_stacked_dense(
        file, compute, {self + "query_proj", self + "key_proj", self + "value_proj"}, c.hidden,
        c.hidden);
    if (c.relative_attention && (c.c2p || c.p2c)) {
      // transformers projects the relative embeddings in every forward pass; they do not depend
      // on the text, so here once. With share_att_key by the layer's own query and key
      // projections (in the model's precision, as its tokens are), else by pos_query_proj and
      // pos_key_proj, which nothing else uses (float32, then dropped).
      std::vector<float> projected;
      std::size_t stride = 3 * c.hidden, query_at = 0, key_at = c.hidden;
      if (c.share_att_key) {
        projected = project(layer.dense.qkv, relative, positions);
      } else {
        std::vector<std::string> names;
        if (c.p2c) names.push_back(self + "pos_query_proj");
        if (c.c2p) names.push_back(self + "pos_key_proj");
        const auto d = take_stacked_dense(file, compute.in_float(), names, c.hidden, c.hidden);
        projected = project(d, relative, positions);
        stride = names.size() * c.hidden;
        key_at = c.p2c ? c.hidden : 0;
      }
      if (c.p2c) layer.pos_query = columns(projected, positions, stride, query_at, c.hidden);
      if (c.c2p) layer.pos_key = columns(projected, positions, stride, key_at, c.hidden);
    }
    layer.dense.attention_out =
        take_dense(file, compute, l + "attention.output.dense", c.hidden, c.hidden);
    layer.dense.attention_norm = norm(l + "attention.output.LayerNorm");
    layer.dense.intermediate =
        take_dense(file, compute, l + "intermediate.dense", c.hidden, c.intermediate);
    layer.dense.output = take_dense(file, compute, l + "output.dense", c.intermediate, c.hidden);
    layer.dense.output_norm = norm(l + "output.LayerNorm");
    layers_.push_back(std::move(layer));
  }
}

std::size_t DebertaEncoder::parameters() const {
  std::size_t n = word_.size() + position_.size() + token_type_.size() + embed_proj_.parameters() +
                  embedding_norm_.parameters() + relative_.size();
  for (const auto& l : layers_) n += l.dense.parameters() + l.pos_key.size() + l.pos_query.size();
  return n;
}

// Word (+ position + token-type) embeddings of every token, each text from a multiple of
// kRowBlock rows on, then embed_proj and LayerNorm; padding rows are zero until the norm.
std::vector<float> DebertaEncoder::embed(std::span<const BertInput> inputs,
                                         std::size_t rows) const {
  const auto& c = config_;
  const std::size_t e = c.embedding;
  std::vector<float> x(rows * e, 0.0f);
  std::size_t start = 0;
  for (const auto& in : inputs) {
    std::size_t r = start;
    start += kernels::padded_rows(in.ids.size());
    check_text_length(in.ids.size(), c.max_tokens());
    for (std::size_t t = 0; t < in.ids.size(); ++t, ++r) {
      const auto id = in.ids[t];
      check_token_id(id, c.vocab);
      // Without token-type embeddings (DeBERTa-v3) the types of a pair's texts are not read.
      const std::size_t type = t < in.type_ids.size() && c.type_vocab > 0 ? in.type_ids[t] : 0;
      if (type > 0) check_token_type(type, c.type_vocab);
      float* row = x.data() + r * e;
      std::copy_n(word_.data() + static_cast<std::size_t>(id) * e, e, row);
      if (!position_.empty())
        for (std::size_t j = 0; j < e; ++j) row[j] += position_[t * e + j];
      if (!token_type_.empty())
        for (std::size_t j = 0; j < e; ++j) row[j] += token_type_[type * e + j];
    }
  }
  if (embed_proj_.in != 0) {
    std::vector<float> projected(rows * c.hidden);
    kernels::linear(embed_proj_, x.data(), rows, projected.data());
    x = std::move(projected);
  }
  kernels::layer_norm(compute_.kernels, embedding_norm_, c.layer_norm_eps, x.data(), rows);
  return x;
}

void DebertaEncoder::attention(const Layer& layer, const LayerDeltas* deltas,
                               const std::vector<float>& qkv, std::span<const BertInput> inputs,
                               std::vector<float>& context) const {
  // A task that adapts the shared query or key projection projects the positions its own way.
  const auto& pos_key =
      deltas != nullptr && !deltas->pos_key.empty() ? deltas->pos_key : layer.pos_key;
  const auto& pos_query =
      deltas != nullptr && !deltas->pos_query.empty() ? deltas->pos_query : layer.pos_query;
  using dim = dnnl::memory::dim;
  const auto& c = config_;
  const std::size_t w = c.hidden, dh = c.head_dim();
  // scale_factor counts c2p and p2c even without relative attention, as transformers does.
  const float scale = 1.0f / std::sqrt(static_cast<float>(dh * c.scale_factor()));
  const auto span = static_cast<std::int64_t>(c.span());
  std::vector<std::size_t> row_of;
  std::size_t offset = 0;
  for (const auto& in : inputs) {
    const std::size_t n = in.ids.size();
    kernels::RelativePositions positions;
    if (c.relative_attention) {
      row_of.resize(2 * n - 1);
      for (std::size_t o = 0; o < row_of.size(); ++o) {
        const auto distance = static_cast<std::int64_t>(o) - static_cast<std::int64_t>(n - 1);
        const auto bucket = relative_bucket(distance, c.position_buckets,
                                            static_cast<std::int64_t>(c.max_relative_positions));
        row_of[o] =
            static_cast<std::size_t>(std::clamp<std::int64_t>(bucket + span, 0, 2 * span - 1));
      }
      positions = {pos_key.empty() ? nullptr : pos_key.data(),
                   pos_query.empty() ? nullptr : pos_query.data(), static_cast<dim>(w),
                   row_of.data()};
    }
    kernels::disentangled_attention_heads(compute_.kernels, qkv.data() + offset * 3 * w,
                                          static_cast<dim>(3 * w), n, c.heads, dh, scale, positions,
                                          context.data() + offset * w, static_cast<dim>(w));
    offset += kernels::padded_rows(n);
  }
}

HiddenStates DebertaEncoder::hidden_states(std::span<const BertInput> inputs, std::size_t threads,
                                           const EncoderDeltas* deltas) const {
  omp_set_num_threads(static_cast<int>(std::max<std::size_t>(threads, 1)));
  const auto& c = config_;
  HiddenStates out;
  const std::size_t rows = lay_out_rows(out, inputs, c.hidden);
  auto x = embed(inputs, rows);
  PostNormScratch scratch(rows, c.hidden, c.intermediate);
  for (std::size_t l = 0; l < layers_.size(); ++l) {
    const LayerDeltas* own = deltas != nullptr && l < deltas->size() ? &(*deltas)[l] : nullptr;
    run_post_norm_layer(
        layers_[l].dense, compute_.kernels, c.layer_norm_eps, c.activation, rows, scratch, x,
        [&](const std::vector<float>& qkv, std::vector<float>& context) {
          attention(layers_[l], own, qkv, inputs, context);
        },
        own);
  }
  out.values = std::move(x);
  return out;
}

std::optional<ModuleSlot> DebertaEncoder::locate(const std::string& module) const {
  const auto m = layer_module(module, std::string(kPrefix) + "encoder.layer.", layers_.size());
  if (!m) return std::nullopt;
  return post_norm_slot(*m, config_.hidden, config_.intermediate, "query_proj", "key_proj",
                        "value_proj");
}

void DebertaEncoder::project_positions(EncoderDeltas& deltas) const {
  const auto& c = config_;
  if (relative_.empty()) return;  // no relative positions, or their own projections
  const std::size_t positions = 2 * c.span(), h = c.hidden;
  for (std::size_t l = 0; l < layers_.size() && l < deltas.size(); ++l) {
    const auto& updates = deltas[l].linear[kAttentionIn];
    // Values (offset 2·hidden on) do not see the positions.
    if (std::none_of(updates.begin(), updates.end(),
                     [&](const kernels::LowRank& d) { return d.offset < 2 * h; }))
      continue;
    const auto projected = project(layers_[l].dense.qkv, relative_, positions, updates);
    if (c.p2c) deltas[l].pos_query = columns(projected, positions, 3 * h, 0, h);
    if (c.c2p) deltas[l].pos_key = columns(projected, positions, 3 * h, h, h);
  }
}

}  // namespace mcpclass::architectures
