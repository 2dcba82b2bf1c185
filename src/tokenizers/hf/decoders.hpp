// tokenizer.json's `decoder`: tokens back to text, as transformers' convert_tokens_to_string
// runs it for a fast tokenizer (what the token-classification pipeline reports as a span's
// `word`). The reference library's decoders/wordpiece.rs and decoders/byte_level.rs.
#pragma once

#include <boost/json/fwd.hpp>

#include <span>
#include <string>

namespace mcpclass::tokenizers::hf {

/// Immutable after construction; decode() may be called concurrently.
class TokenDecoder {
 public:
  /// `decoder` is the tokenizer.json block; null joins the tokens with spaces, as transformers
  /// does without a decoder. Throws ClassifyError naming a type other than WordPiece and
  /// ByteLevel.
  explicit TokenDecoder(const boost::json::value& decoder);

  std::string decode(std::span<const std::string> tokens) const;

 private:
  enum class Kind { join, wordpiece, byte_level };
  Kind kind_ = Kind::join;
  std::string prefix_ = "##";
  bool cleanup_ = true;
};

}  // namespace mcpclass::tokenizers::hf
