// Internal: per-token logits of one text's windows → labelled spans, a port of the `transformers`
// token-classification pipeline's post-processing (pipelines/token_classification.py:
// postprocess, gather_pre_entities, aggregate, aggregate_word(s), group_sub_entities, get_tag,
// group_entities, aggregate_overlapping_entities), with its numbers and ties kept.
#pragma once

#include "mcpclass/learned/token_classifier.hpp"
#include "mcpclass/tokenizers/text_tokenizer.hpp"
#include "tokenizers/hf/decoders.hpp"

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace mcpclass::learned::detail {

/// What the pipeline reads from the tokenizer and the model config.
struct SpanRules {
  std::vector<std::string> labels;  ///< id2label
  /// The unknown token's spelling; a token spelled so reports the text it covers.
  std::string unk_token;
  /// The tokenizer's model has a continuing_subword_prefix (WordPiece's "##"): a token is a
  /// subword when its spelling and the text it covers differ in length; else the pipeline's
  /// fallback (no space just before or at the token's start).
  bool word_aware = false;
  tokenizers::hf::TokenDecoder decoder;
  std::vector<std::string> ignore_labels;
};

/// One window of a text: its tokens and their tokens × labels logits.
struct SpanWindow {
  const tokenizers::TokenizedText* tokens = nullptr;
  std::span<const float> logits;
};

/// The spans of `text` read through `windows` (the first window and its overflowing ones),
/// ignore_labels dropped, overlapping spans of several windows merged.
std::vector<TokenSpan> aggregate_spans(std::string_view text, std::span<const SpanWindow> windows,
                                       TokenAggregation aggregation, const SpanRules& rules);

}  // namespace mcpclass::learned::detail
