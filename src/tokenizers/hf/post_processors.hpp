// The post-processors of tokenizer.json ("post_processor" block): special tokens around the
// sequence (Template, Bert, Roberta) and byte-level offset trimming.
#pragma once

#include "mcpclass/tokenizers/text_tokenizer.hpp"

#include <boost/json/fwd.hpp>

#include <memory>
#include <string_view>

namespace mcpclass::tokenizers::hf {

/// Immutable after construction; process() may be called concurrently.
class PostProcessor {
 public:
  virtual ~PostProcessor() = default;
  /// Tokens process() adds to a single sequence (truncation leaves room for them).
  virtual std::size_t added_tokens() const = 0;
  /// Processes `e` and its overflowing windows; `text` is what was encoded (offsets index it).
  virtual void process(TokenizedText& e, std::string_view text, bool add_special_tokens) const = 0;
};

/// Null for a JSON null. Throws ClassifyError naming an unknown type or a bad field.
std::unique_ptr<PostProcessor> make_post_processor(const boost::json::value& block);

}  // namespace mcpclass::tokenizers::hf
