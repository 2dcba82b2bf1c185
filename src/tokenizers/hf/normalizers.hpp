// The normalizers of tokenizer.json ("normalizer" block), each as the reference library runs it,
// keeping the alignment of every normalized byte to the original text.
#pragma once

#include "tokenizers/hf/normalized_text.hpp"

#include <boost/json/fwd.hpp>

#include <memory>

namespace mcpclass::tokenizers::hf {

/// Immutable after construction; normalize() may be called concurrently.
class Normalizer {
 public:
  virtual ~Normalizer() = default;
  virtual void normalize(NormalizedText& text) const = 0;
};

/// Builds the normalizer a "normalizer" block describes; null for a JSON null. Throws
/// ClassifyError naming an unknown type or a bad field.
std::unique_ptr<Normalizer> make_normalizer(const boost::json::value& block);

enum class UnicodeForm { nfc, nfd, nfkc, nfkd };
/// Unicode normalization with the reference's alignment bookkeeping.
void unicode_normalize(NormalizedText& text, UnicodeForm form);

}  // namespace mcpclass::tokenizers::hf
