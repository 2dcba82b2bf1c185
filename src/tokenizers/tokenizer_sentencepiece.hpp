// A sentencepiece tokenizer, loaded through the isolated shim library libmcpclass_spm.so (see
// src/tokenizers/sentencepiece_shim.h for why). Available when built with MCPCLASS_WITH_LEARNED.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace mcpclass::tokenizers {

/// Immutable after construction; encode() may be called concurrently from any thread. Owns the
/// shim's dlopen handle (closed when the last tokenizer using it is destroyed).
class SentencePieceTokenizer {
 public:
  /// Loads a `.model` file. Throws ClassifyError with the path and the reason (missing or
  /// corrupt file, shim not found) — never crashes on a bad file.
  explicit SentencePieceTokenizer(const std::string& model_path);
  ~SentencePieceTokenizer();
  SentencePieceTokenizer(const SentencePieceTokenizer&) = delete;
  SentencePieceTokenizer& operator=(const SentencePieceTokenizer&) = delete;

  /// Token ids of `text` (UTF-8; invalid bytes become unknown pieces). Throws ClassifyError.
  std::vector<std::int32_t> encode(std::string_view text) const;
  std::size_t piece_count() const;

  /// Builds the `.model` for a TF.js Universal Sentence Encoder vocabulary (vocab.json): NFKC,
  /// `▁` prefix, every space → `▁`, id 0 unknown, ids 1–5 control. Throws ClassifyError.
  static std::string model_from_tfjs_vocab(const std::string& vocab_json_path);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace mcpclass::tokenizers
