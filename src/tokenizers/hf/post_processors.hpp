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
  /// Tokens the pair template adds (truncation of a pair leaves room for them).
  virtual std::size_t added_pair_tokens() const { return added_tokens(); }
  /// What the processor does to one text of a pair before the texts are joined (byte-level
  /// offset trimming); `text` is that text.
  virtual void prepare(TokenizedText&, std::string_view) const {}
  /// Whether join() applies a pair template (else the texts are concatenated as they are).
  virtual bool joins() const { return false; }
  /// `a` ← the pair template over a and b (both prepared).
  virtual void join(TokenizedText& a, TokenizedText&& b) const;
};

/// The reference's pair post-processing: every processor prepares both texts, then the first
/// that joins applies its pair template (none: `b` appended to `a`, token types as they are).
/// `processor` may be null.
void process_pair(const PostProcessor* processor, TokenizedText& a, TokenizedText&& b,
                  std::string_view text, std::string_view text_pair, bool add_special_tokens);

/// Null for a JSON null. Throws ClassifyError naming an unknown type or a bad field.
std::unique_ptr<PostProcessor> make_post_processor(const boost::json::value& block);

}  // namespace mcpclass::tokenizers::hf
