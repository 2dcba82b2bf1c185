// Internal: what every native model of a Hugging Face checkpoint directory says about itself,
// whatever its head (sequence_model.hpp, token_model.hpp) and architecture (BERT family,
// ModernBERT), and its description for `mcpclass model inspect`.
#pragma once

#include "architectures/bert/bert_config.hpp"
#include "architectures/common/decoder_config.hpp"
#include "architectures/deberta/deberta_config.hpp"
#include "architectures/modernbert/modernbert_config.hpp"

#include <boost/json/object.hpp>

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace mcpclass::architectures {

/// Thread-safety: immutable after construction; every method may be called concurrently.
class CheckpointModel {
 public:
  virtual ~CheckpointModel() = default;

  virtual const std::string& architecture() const = 0;
  virtual const std::string& config_file() const = 0;
  virtual const std::vector<std::string>& labels() const = 0;
  virtual std::size_t vocab() const = 0;
  /// Tokens a text may have, special tokens included.
  virtual std::size_t max_tokens() const = 0;
  /// Sizes, parameters and what is computed, for `mcpclass model inspect`.
  virtual boost::json::object describe() const = 0;
};

/// `Interface` (a CheckpointModel) answered from a native model's config(); the subclass adds
/// the head's logits() and describe().
template <class Model, class Interface>
class NativeCheckpointModel : public Interface {
 public:
  template <class... Args>
  explicit NativeCheckpointModel(Args&&... args) : model_(std::forward<Args>(args)...) {}

  const std::string& architecture() const override { return model_.config().architecture; }
  const std::string& config_file() const override { return model_.config().file; }
  const std::vector<std::string>& labels() const override { return model_.config().labels; }
  std::size_t vocab() const override { return model_.config().vocab; }
  std::size_t max_tokens() const override { return model_.config().max_tokens(); }

 protected:
  Model model_;
};

/// A BERT-family checkpoint whose head computes `head` from the encoder's hidden states.
boost::json::object describe_bert(const BertConfig& c, std::size_t parameters,
                                  const std::string& head);
/// A ModernBERT checkpoint whose head computes `head` from the encoder's hidden states.
boost::json::object describe_modernbert(const ModernBertConfig& c, std::size_t parameters,
                                        const std::string& head);
/// A Gemma 3 or Qwen3 decoder whose output computes `head` from its hidden states.
boost::json::object describe_decoder(const DecoderConfig& c, std::size_t parameters,
                                     const std::string& head);
/// A DeBERTa-v2/v3 checkpoint whose head computes `head` from the encoder's hidden states.
boost::json::object describe_deberta(const DebertaConfig& c, std::size_t parameters,
                                     const std::string& head);

}  // namespace mcpclass::architectures
