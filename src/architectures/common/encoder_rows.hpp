// Internal: what every encoder does to a batch before and around its layers, whatever the
// family: the rows each text takes (from a multiple of kRowBlock on, so a batch gives every text
// its single-text result), the checks of its tokens, and the post-norm layer BERT and DeBERTa
// share (only their attention differs).
#pragma once

#include "architectures/common/encoder_deltas.hpp"
#include "architectures/common/hidden_states.hpp"
#include "kernels/dense_rows.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace mcpclass::architectures {

/// Sets out.width, first_row and tokens for `inputs` (anything with .ids) and returns the rows
/// they take in all.
template <class Inputs>
std::size_t lay_out_rows(HiddenStates& out, const Inputs& inputs, std::size_t width) {
  out.width = width;
  std::size_t rows = 0;
  for (const auto& in : inputs) {
    out.first_row.push_back(rows);
    out.tokens.push_back(in.ids.size());
    rows += kernels::padded_rows(in.ids.size());
  }
  return rows;
}

/// Throws ClassifyError for a text of no tokens or more than `max_tokens`.
void check_text_length(std::size_t tokens, std::size_t max_tokens);
/// Throws ClassifyError for an id outside [0, vocab).
void check_token_id(std::int32_t id, std::size_t vocab);
/// Throws ClassifyError for a token type at or past `types`.
void check_token_type(std::size_t type, std::size_t types);

/// A module under an encoder's layers, `<layers>N.<rest>` (layers: "bert.encoder.layer."):
/// its layer N (below `count`) and the rest of its name; nullopt for any other module.
struct LayerModule {
  std::size_t layer = 0;
  std::string_view rest;
};
std::optional<LayerModule> layer_module(std::string_view module, std::string_view layers,
                                        std::size_t count);

/// Where a LoRA update of a post-norm layer's module goes (BertEncoder's and DebertaEncoder's
/// locate): attention.self.<query|key|value> (the three named as the family names them),
/// attention.output.dense, intermediate.dense and output.dense; nullopt for any other.
std::optional<ModuleSlot> post_norm_slot(const LayerModule& m, std::size_t hidden,
                                         std::size_t intermediate, std::string_view query,
                                         std::string_view key, std::string_view value);

/// The products and norms of one post-norm encoder layer (transformers' BertLayer,
/// DebertaV2Layer): attention's output dense and LayerNorm after the residual, the intermediate
/// dense with the activation, the output dense and LayerNorm after the residual.
struct PostNormLayer {
  kernels::Dense qkv;  ///< queries, keys and values stacked: 3·hidden × hidden.
  kernels::Dense attention_out;
  kernels::Norm attention_norm;
  kernels::Dense intermediate, output;
  kernels::Norm output_norm;

  std::size_t parameters() const {
    return qkv.parameters() + attention_out.parameters() + attention_norm.parameters() +
           intermediate.parameters() + output.parameters() + output_norm.parameters();
  }
};

/// The buffers of a batch's layers, allocated once for all of them.
struct PostNormScratch {
  PostNormScratch(std::size_t rows, std::size_t hidden, std::size_t intermediate)
      : qkv(rows * 3 * hidden),
        context(rows * hidden, 0.0f),
        projected(rows * hidden),
        wide(rows * intermediate) {}
  std::vector<float> qkv, context, projected, wide;
};

/// x (rows × hidden) ← `layer` over x, `attend(qkv, context)` computing the attention of every
/// text from the stacked queries, keys and values into the context rows.
/// `deltas`: a task's LoRA updates of this layer (null: none).
template <class Attend>
void run_post_norm_layer(const PostNormLayer& layer, kernels::KernelSet set, float eps,
                         kernels::HiddenActivation activation, std::size_t rows, PostNormScratch& s,
                         std::vector<float>& x, Attend&& attend,
                         const LayerDeltas* deltas = nullptr) {
  auto of = [&](LinearSlot slot) {
    return deltas == nullptr ? std::span<const kernels::LowRank>() : deltas->linear[slot];
  };
  kernels::linear_adapted(layer.qkv, of(kAttentionIn), x.data(), rows, s.qkv.data());
  attend(s.qkv, s.context);
  kernels::linear_adapted(layer.attention_out, of(kAttentionOut), s.context.data(), rows,
                          s.projected.data());
  kernels::residual_norm(set, layer.attention_norm, eps, x.data(), s.projected.data(), rows,
                         x.data());
  kernels::linear_adapted(layer.intermediate, of(kFeedForwardIn), x.data(), rows, s.wide.data(),
                          activation);
  kernels::linear_adapted(layer.output, of(kFeedForwardOut), s.wide.data(), rows,
                          s.projected.data());
  kernels::residual_norm(set, layer.output_norm, eps, x.data(), s.projected.data(), rows, x.data());
}

}  // namespace mcpclass::architectures
