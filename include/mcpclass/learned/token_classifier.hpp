// Token classification (PII detection and other NER) with a Hugging Face *ForTokenClassification
// checkpoint (BertForTokenClassification, RobertaForTokenClassification, XLM-RoBERTa,
// ModernBertForTokenClassification: ModernBERT and mmBERT): labelled
// spans of a text, merged exactly as the `transformers` token-classification pipeline merges
// them (its aggregation strategies none, simple, first, average and max, the ignore_labels
// default ["O"], stride windows over long texts, overlapping windows merged as the pipeline's
// aggregate_overlapping_entities does).
//
// Offsets: `start`/`end` are Unicode code points of the text (Python string indices, as the
// pipeline reports them); `byte_start`/`byte_end` are the same span in UTF-8 bytes.
#pragma once

#include "mcpclass/learned/embedding_encoder.hpp"

#include <boost/json.hpp>

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mcpclass::learned {

namespace json = boost::json;

/// The pipeline's aggregation_strategy.
enum class TokenAggregation { none, simple, first, average, max };

/// "none", "simple", "first", "average", "max".
std::string_view to_string(TokenAggregation a);
/// The strategy of that name, or nullopt.
std::optional<TokenAggregation> parse_token_aggregation(std::string_view name);

/// One labelled span.
struct TokenSpan {
  /// The label without its B-/I- prefix (the pipeline's entity_group); with `none`, the token's
  /// own label (the pipeline's entity).
  std::string label;
  double score = 0.0;  ///< As the strategy computes it (a probability or a mean of them).
  std::string word;    ///< The tokens decoded as the tokenizer's decoder spells them.
  std::size_t start = 0, end = 0;            ///< Code points of the text.
  std::size_t byte_start = 0, byte_end = 0;  ///< UTF-8 bytes of the text.
  std::optional<std::size_t> index;          ///< With `none`: the token's index in its window.

  /// {entity_group (entity with none), score, word, start, end, byte_start, byte_end[, index]}.
  json::object to_json(TokenAggregation aggregation) const;
};

/// `token_classifier:` in the configuration. Parsing needs no learned component.
struct TokenClassifierSettings {
  /// A checkpoint directory (config.json, model.safetensors or its index, tokenizer.json,
  /// tokenizer_config.json); `cache:` paths as LearnedSettings. Required.
  std::string model;
  TokenAggregation aggregation = TokenAggregation::simple;
  /// Tokens shared by consecutive windows of a text longer than a window (the pipeline's
  /// `stride`); must be below the window's tokens less the special tokens. `none` reads the
  /// first window only, as the pipeline (which refuses a stride with none) does.
  std::size_t stride = 16;
  /// Tokens a window holds, special tokens included; 0 = the model's max_position_embeddings
  /// (the tokenizer's model_max_length).
  std::size_t max_tokens = 0;
  /// Labels (after grouping: without B-/I-) never reported.
  std::vector<std::string> ignore_labels{"O"};
  /// OpenMP threads per call.
  std::size_t threads = 1;
  /// Arithmetic (`auto`, `f32`, `bf16`, `int8`) and the highest kernel set, as a transformer
  /// classifier's (LearnedSettings).
  EncoderPrecision precision = EncoderPrecision::automatic;
  std::string kernels;
  /// Name of the MCP tool that serves it.
  std::string tool = "detect_pii";

  /// Strict: unknown keys and bad values throw ConfigError naming `path.key`.
  static TokenClassifierSettings from_json(const json::value& v,
                                           const std::string& path = "token_classifier");
  json::object to_json() const;
};

/// Thread-safety: immutable after construction; detect() may be called concurrently.
class TokenClassifier {
 public:
  virtual ~TokenClassifier() = default;
  /// The spans of `text` in text order, with the configured strategy unless `aggregation` is
  /// given. Throws ClassifyError on invalid UTF-8.
  virtual std::vector<TokenSpan> detect(std::string_view text,
                                        std::optional<TokenAggregation> aggregation = {}) const = 0;
  /// The configured strategy (detect()'s default).
  virtual TokenAggregation aggregation() const = 0;
  /// The checkpoint's labels in class-id order (id2label).
  virtual const std::vector<std::string>& labels() const = 0;
  /// {model, architecture, labels, aggregation, stride, max_tokens}.
  virtual json::object info() const = 0;
};

/// Loads settings.model. Throws ClassifyError naming the file for a bad checkpoint (a sequence
/// classifier too), tokenizer or decoder, or a stride that leaves a window no new token; throws
/// ConfigError in a build without the learned component.
std::unique_ptr<TokenClassifier> make_token_classifier(const TokenClassifierSettings& settings);

}  // namespace mcpclass::learned
