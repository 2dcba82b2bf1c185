// The pre-tokenizers of tokenizer.json ("pre_tokenizer" block): they cut the normalized text into
// the pieces the model tokenizes one by one.
#pragma once

#include "tokenizers/hf/pieces.hpp"

#include <boost/json/fwd.hpp>

#include <memory>

namespace mcpclass::tokenizers::hf {

/// Immutable after construction; pre_tokenize() may be called concurrently.
class PreTokenizer {
 public:
  virtual ~PreTokenizer() = default;
  virtual void pre_tokenize(std::vector<Piece>& pieces) const = 0;
};

/// Null for a JSON null. Throws ClassifyError naming an unknown type or a bad field.
std::unique_ptr<PreTokenizer> make_pre_tokenizer(const boost::json::value& block);

}  // namespace mcpclass::tokenizers::hf
