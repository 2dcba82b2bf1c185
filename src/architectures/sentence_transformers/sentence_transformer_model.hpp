// Internal: a sentence-transformers model directory computed natively: the Transformer module's
// base model — BERT family (bert_encoder.hpp), ModernBERT / mmBERT (modernbert_encoder.hpp),
// the same code the classifiers run, or a Gemma 3 / Qwen3 decoder (common/decoder_encoder.hpp)
// — then Pooling, the Dense modules (in float32) and, when modules.json lists it, Normalize
// (sentence_pooling.hpp); optionally cut short in both directions (2D Matryoshka).
#pragma once

#include "architectures/bert/bert_encoder.hpp"
#include "architectures/common/decoder_encoder.hpp"
#include "architectures/modernbert/modernbert_encoder.hpp"
#include "architectures/sentence_transformers/sentence_transformer_config.hpp"

#include <boost/json/object.hpp>

#include <cstddef>
#include <span>
#include <string>
#include <variant>
#include <vector>

namespace mcpclass::architectures {

/// 2D Matryoshka (sentence-transformers' Matryoshka2dLoss / AdaptiveLayerLoss): how much of the
/// encoder runs and how much of its embedding is kept.
struct SentenceDepth {
  /// Encoder layers computed, the first N (0 = all). The pooling reads hidden state N as
  /// transformers' output_hidden_states gives it: for ModernBERT the residual stream before
  /// final_norm (unless the config's representation_contract says otherwise), final_norm
  /// only after the last layer.
  std::size_t layers = 0;
  /// Embedding values kept, the first D (0 = all), L2-normalized again.
  std::size_t dimensions = 0;
};

/// Thread-safety: immutable after construction; embeddings() may be called concurrently.
class SentenceTransformerModel {
 public:
  /// Reads `dir` (sentence_transformer_config.hpp) and the Transformer module's config.json
  /// (BertModel, RobertaModel, XLMRobertaModel, or any of model_type modernbert, gemma3_text or
  /// qwen3) and weights, and each Dense module's weights.
  /// Throws ClassifyError naming the file and key or tensor for a bad directory, another
  /// architecture, a Pooling word_embedding_dimension other than hidden_size, a missing,
  /// misshapen or non-finite tensor, or a `depth` past the model's layers or dimension.
  /// `progress`: bytes of tensors read, as read_checkpoint_tensors reports it.
  /// `compute`: the kernel set and the precision of the encoder's products.
  explicit SentenceTransformerModel(const std::string& dir,
                                    const checkpoint::CheckpointProgress& progress = {},
                                    const kernels::Compute& compute = kernels::default_compute(),
                                    const SentenceDepth& depth = {});

  const SentenceTransformerConfig& config() const { return config_; }
  /// The Transformer module's architecture (e.g. BertModel, ModernBertModel).
  const std::string& architecture() const;
  /// The Transformer module's config.json, for messages.
  const std::string& config_file() const;
  /// Token ids the model embeds: every id is below it.
  std::size_t vocab() const;
  /// The Transformer is a decoder-only model (Gemma 3, Qwen3).
  bool decoder() const { return std::holds_alternative<DecoderConfig>(base_); }
  /// Encoder layers computed and the model's own count.
  std::size_t layers() const { return depth_.layers; }
  std::size_t model_layers() const { return model_layers_; }
  /// The sentence embedding's width (SentenceDepth::dimensions when set).
  std::size_t dimension() const { return depth_.dimensions; }
  /// Tokens a text may have, special tokens included: max_seq_length when set, capped by the
  /// model's positions (Transformer.tokenize truncates there).
  std::size_t max_tokens() const;
  /// Weights held (every tensor's elements).
  std::size_t parameters() const;

  /// Row-major `inputs.size() × dimension()` sentence embeddings, normalized when `normalize`
  /// (pass config().normalize for the model's own output; a cut embedding is renormalized
  /// only when `normalize`). A text of no tokens gets zeros. A
  /// batch gives every text exactly its single-text result. `threads`: OpenMP threads.
  /// `prompt_tokens`: with Pooling's include_prompt false, the tokens of the prompt every text
  /// starts with, left out of the pooling (sentence_pooling.hpp); 0 otherwise.
  std::vector<float> embeddings(std::span<const BertInput> inputs, std::size_t threads,
                                bool normalize, std::size_t prompt_tokens = 0) const;

  /// Sizes, modules and what is computed, for `mcpclass model inspect`.
  boost::json::object describe() const;

 private:
  using Encoder = std::variant<BertEncoder, ModernBertEncoder, DecoderEncoder>;
  using BaseConfig = std::variant<BertConfig, ModernBertConfig, DecoderConfig>;
  struct Loaded {
    SentenceTransformerConfig config;
    BaseConfig base;
    std::size_t model_layers = 0;
    SentenceDepth depth;
    checkpoint::CheckpointTensors tensors;
  };
  static Loaded load(const std::string& dir, const checkpoint::CheckpointProgress& progress,
                     const SentenceDepth& depth);
  static Encoder make_encoder(const BaseConfig& base, checkpoint::CheckpointTensors& tensors,
                              const kernels::Compute& compute);
  SentenceTransformerModel(Loaded loaded, const kernels::Compute& compute);

  SentenceTransformerConfig config_;
  BaseConfig base_;
  std::size_t model_layers_ = 0;
  SentenceDepth depth_;  ///< Both set: the layers and dimensions computed.
  Encoder encoder_;
  std::vector<kernels::Dense> dense_;  ///< config_.dense's weights, float32
};

}  // namespace mcpclass::architectures
