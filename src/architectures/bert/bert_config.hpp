// Internal: the config.json of a BERT-family sequence or token classifier (BERT, MiniLM,
// RoBERTa, XLM-RoBERTa) as `transformers` writes it, checked before any weight is read.
#pragma once

#include "architectures/common/activations.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace mcpclass::architectures {

enum class BertFamily { bert, roberta };
/// What the checkpoint computes from the hidden states: one answer a text
/// (*ForSequenceClassification), one a token (*ForTokenClassification), or nothing: the base
/// model (BertModel, RobertaModel, XLMRobertaModel; its tensors have no prefix), whose hidden
/// states a sentence-transformers Pooling reads.
enum class BertHead { sequence, token, none };

struct BertConfig {
  std::string file;          ///< The config.json read, for messages.
  std::string architecture;  ///< e.g. BertForSequenceClassification.
  BertFamily family = BertFamily::bert;
  BertHead head = BertHead::sequence;
  std::string prefix;  ///< Tensor name prefix of the encoder: "bert", "roberta" or "" (none).
  std::size_t vocab = 0, hidden = 0, layers = 0, heads = 0, intermediate = 0;
  std::size_t max_positions = 0, type_vocab = 0;
  float layer_norm_eps = 1e-12f;
  std::int64_t pad_token_id = 0;
  HiddenActivation activation = HiddenActivation::gelu;
  std::vector<std::string> labels;  ///< Class-id order.

  /// First position id of a text: 0 for BERT, pad_token_id + 1 for RoBERTa.
  std::size_t position_offset() const;
  /// Tokens a text may have, special tokens included.
  std::size_t max_tokens() const;
};

/// Reads and checks `dir/config.json`, whose architecture must have the `head` wanted. Throws
/// ClassifyError naming the file and the key for an unknown architecture or model_type, the
/// other head, a missing or out-of-range size, an unsupported hidden_act,
/// position_embedding_type or problem_type.
BertConfig read_bert_config(const std::string& dir, BertHead head);

}  // namespace mcpclass::architectures
