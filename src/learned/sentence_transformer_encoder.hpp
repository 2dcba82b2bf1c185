// Internal: a sentence-transformers model directory (sentence_transformer_model.hpp) behind the
// SentenceEncoder contract, so `embedding_knn` and `trained_head` (and `mcpclass train`) run
// over it: texts stripped and, with do_lower_case, lowercased as Transformer.tokenize does,
// tokenized by the directory's tokenizer.json, truncated at max_seq_length (and max_tokens),
// batched by length, pooled. The contract's vectors are unit vectors (the kNN index compares
// them by dot product), so they are L2-normalized whether or not modules.json lists Normalize.
#pragma once

#include "mcpclass/learned/embedding_encoder.hpp"

#include <memory>

namespace mcpclass::learned::detail {

/// Loads the directory options.encoder_path; its own tokenizer.json is used (options.
/// tokenizer_path is not read). Float32 only: precision bf16 is refused. Throws ClassifyError
/// naming the file for a bad directory (sentence_transformer_model.hpp), or a tokenizer with
/// more tokens than the model's vocab_size.
/// Thread-safety: the returned encoder's const members may be called concurrently.
std::shared_ptr<const SentenceEncoder> load_sentence_transformer(const EncoderOptions& options);

}  // namespace mcpclass::learned::detail
