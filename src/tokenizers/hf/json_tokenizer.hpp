// A Hugging Face tokenizer.json, run as the reference library runs it: added tokens, normalizer,
// pre-tokenizer, model, truncation, post-processor; offsets into the caller's UTF-8 text.
#pragma once

#include "mcpclass/tokenizers/text_tokenizer.hpp"
#include "tokenizers/hf/added_vocabulary.hpp"
#include "tokenizers/hf/models.hpp"
#include "tokenizers/hf/normalizers.hpp"
#include "tokenizers/hf/post_processors.hpp"
#include "tokenizers/hf/pre_tokenizers.hpp"
#include "tokenizers/hf/truncation.hpp"

#include <boost/json/fwd.hpp>

namespace mcpclass::tokenizers::hf {

/// Immutable after construction; encode() may be called concurrently.
class JsonTokenizer final : public TextTokenizer {
 public:
  /// `document` is a parsed tokenizer.json. Throws ClassifyError naming the offending block.
  JsonTokenizer(const boost::json::value& document, const TokenizerOptions& options,
                std::size_t config_max_length);
  TokenizedText encode(std::string_view text, bool add_special_tokens) const override;
  TokenizedText encode_pair(std::string_view text, std::string_view text_pair,
                            bool add_special_tokens) const override;
  std::size_t vocab_size() const override { return vocab_size_; }

 private:
  // The text's tokens before truncation and post-processing; with a `limit`, only the pieces
  // (from `side`) that give it that many tokens, the last one whole.
  TokenizedText tokenize(std::string_view text, std::size_t limit = 0,
                         TruncationSide side = TruncationSide::right) const;

  std::unique_ptr<Normalizer> normalizer_;
  std::unique_ptr<PreTokenizer> pre_tokenizer_;
  std::unique_ptr<Model> model_;
  std::unique_ptr<PostProcessor> post_processor_;
  AddedVocabulary added_;
  std::size_t max_length_ = 0;  // 0: no truncation
  std::size_t stride_ = 0;
  TruncationSide side_ = TruncationSide::right;
  PairTruncation pair_truncation_ = PairTruncation::longest_first;
  std::size_t vocab_size_ = 0;
};

}  // namespace mcpclass::tokenizers::hf
