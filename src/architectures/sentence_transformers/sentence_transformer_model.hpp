// Internal: a sentence-transformers model directory computed natively: the Transformer module's
// BERT-family base model (bert_encoder.hpp, the same code the classifiers run), then Pooling
// and, when modules.json lists it, Normalize (sentence_pooling.hpp).
#pragma once

#include "architectures/bert/bert_encoder.hpp"
#include "architectures/sentence_transformers/sentence_transformer_config.hpp"

#include <boost/json/object.hpp>

#include <cstddef>
#include <span>
#include <string>
#include <vector>

namespace mcpclass::architectures {

/// Thread-safety: immutable after construction; embeddings() may be called concurrently.
class SentenceTransformerModel {
 public:
  /// Reads `dir` (sentence_transformer_config.hpp) and the Transformer module's config.json
  /// (BertModel, RobertaModel or XLMRobertaModel) and weights. Throws ClassifyError naming the
  /// file and key or tensor for a bad directory, another architecture, a Pooling
  /// word_embedding_dimension other than hidden_size, or a missing, misshapen or non-finite
  /// tensor. `progress`: bytes of tensors read, as read_checkpoint_tensors reports it.
  /// `compute`: the kernel set and the precision of the encoder's products.
  explicit SentenceTransformerModel(const std::string& dir,
                                    const checkpoint::CheckpointProgress& progress = {},
                                    const kernels::Compute& compute = kernels::default_compute());

  const SentenceTransformerConfig& config() const { return config_; }
  const BertConfig& bert() const { return bert_; }
  /// The sentence embedding's width.
  std::size_t dimension() const { return config_.pooling.dimension(); }
  /// Tokens a text may have, special tokens included: max_seq_length when set, capped by the
  /// model's positions (Transformer.tokenize truncates there).
  std::size_t max_tokens() const;
  /// Weights held (every tensor's elements).
  std::size_t parameters() const { return encoder_.parameters(); }

  /// Row-major `inputs.size() × dimension()` sentence embeddings, normalized when `normalize`
  /// (pass config().normalize for the model's own output). A text of no tokens gets zeros. A
  /// batch gives every text exactly its single-text result. `threads`: OpenMP threads.
  std::vector<float> embeddings(std::span<const BertInput> inputs, std::size_t threads,
                                bool normalize) const;

  /// Sizes, modules and what is computed, for `mcpclass model inspect`.
  boost::json::object describe() const;

 private:
  struct Loaded {
    SentenceTransformerConfig config;
    BertCheckpoint checkpoint;
  };
  static Loaded load(const std::string& dir, const checkpoint::CheckpointProgress& progress);
  SentenceTransformerModel(Loaded loaded, const kernels::Compute& compute);

  SentenceTransformerConfig config_;
  BertConfig bert_;
  BertEncoder encoder_;
};

}  // namespace mcpclass::architectures
