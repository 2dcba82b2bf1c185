// Internal: a BERT-family sequence classifier (BertForSequenceClassification and the RoBERTa
// variants) computed natively: float32 weights from the checkpoint, oneDNN's sgemm for every
// product, no libtorch. The graph is transformers' modeling_bert.py / modeling_roberta.py in
// eval mode: word + position + token-type embeddings, LayerNorm; per layer self-attention over
// the text's own tokens, dense, residual, LayerNorm (post-norm), intermediate dense with
// hidden_act, dense, residual, LayerNorm; the first token through the pooler (BERT) or the
// classification head's dense (RoBERTa), tanh, then the output projection to one logit a label.
#pragma once

#include "learned/bert_config.hpp"
#include "learned/checkpoint_files.hpp"
#include "learned/dense_rows.hpp"

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace mcpclass::learned::detail {

/// One text's tokens: ids and token types (empty = all type 0).
struct BertInput {
  std::span<const std::int32_t> ids;
  std::span<const std::uint32_t> type_ids;
};

/// Thread-safety: immutable after construction; logits() may be called concurrently.
class BertSequenceModel {
 public:
  /// Reads `dir`'s config.json and weights (checkpoint_files.hpp), with the LoRA adapter of
  /// `adapter_dir` merged in when it is not empty. Throws ClassifyError naming the file and
  /// tensor for an unsupported config, a missing, misshapen or non-finite tensor.
  /// `progress`: (bytes of tensors read, bytes in all), as read_checkpoint_tensors reports it.
  explicit BertSequenceModel(const std::string& dir, const std::string& adapter_dir = {},
                             const CheckpointProgress& progress = {});

  const BertConfig& config() const { return config_; }

  /// Weights held (every tensor's elements).
  std::size_t parameters() const;

  /// Activation rows a text of `tokens` tokens takes in a batch (its tokens, padded to a block).
  static std::size_t rows_for(std::size_t tokens);

  /// Row-major `inputs.size() × labels` logits. Each text attends only to its own tokens and
  /// every product has one shape whatever the batch, so a batch gives every text exactly (bit
  /// for bit) its single-text result. Texts must be non-empty and at most
  /// config().max_tokens() long; throws ClassifyError for an id or token type the model lacks.
  /// `threads`: OpenMP threads of this call's products.
  std::vector<float> logits(std::span<const BertInput> inputs, std::size_t threads) const;

 private:
  struct Layer {
    Dense qkv;  ///< query, key and value stacked: 3·hidden × hidden.
    Dense attention_out;
    Norm attention_norm;
    Dense intermediate, output;
    Norm output_norm;
  };

  void layer_norm(const Norm& n, float* x, std::size_t rows) const {
    detail::layer_norm(n, config_.layer_norm_eps, x, rows);
  }
  std::vector<float> embed(std::span<const BertInput> inputs, std::size_t rows) const;
  void attention(const std::vector<float>& qkv, std::span<const BertInput> inputs,
                 std::vector<float>& context) const;

  BertConfig config_;
  std::vector<float> word_, position_, token_type_;
  Norm embedding_norm_;
  std::vector<Layer> layers_;
  Dense pooler_;  ///< BERT's pooler.dense, RoBERTa's classifier.dense: then tanh.
  Dense head_;    ///< classifier (BERT) or classifier.out_proj (RoBERTa).
};

}  // namespace mcpclass::learned::detail
