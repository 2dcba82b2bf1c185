// The Precompiled normalizer: sentencepiece's normalization rules as tokenizer.json carries them
// (`precompiled_charsmap`, base64 of a darts-clone double-array trie followed by the replacement
// strings), applied by grapheme as the reference library does.
#pragma once

#include "tokenizers/hf/normalized_text.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mcpclass::tokenizers::hf {

/// Immutable after construction; normalize() may be called concurrently.
class PrecompiledCharsmap {
 public:
  /// Throws ClassifyError when the blob is not base64 or its trie size exceeds the blob.
  static PrecompiledCharsmap from_base64(const std::string& base64);
  /// The raw blob: a little-endian u32 trie size in bytes, the trie, then NUL-separated strings.
  explicit PrecompiledCharsmap(std::string blob);
  void normalize(NormalizedText& text) const;
  /// The replacement of the shortest rule prefixing `chunk` (the reference's quirk), if any.
  std::optional<std::string_view> transform(std::string_view chunk) const;

 private:
  std::vector<std::uint32_t> units_;
  std::string strings_;
};

}  // namespace mcpclass::tokenizers::hf
