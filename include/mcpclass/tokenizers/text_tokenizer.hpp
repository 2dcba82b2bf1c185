// Text → token ids for the learned classifiers, whatever the model ships: a Hugging Face
// `tokenizer.json` (run exactly as the reference `tokenizers` library runs it), a plain BERT
// `vocab.txt`, or a sentencepiece `.model`. The file's type decides (open_text_tokenizer).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mcpclass::tokenizers {

/// One encoded text. `offsets` are byte ranges of the caller's UTF-8 text ((0,0) for added
/// special tokens); `tokens`/`offsets` are empty for tokenizers that give ids only.
struct TokenizedText {
  std::vector<std::int32_t> ids;
  std::vector<std::string> tokens;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> offsets;
  std::vector<std::uint32_t> type_ids;
  std::vector<std::uint8_t> special_tokens_mask;
  /// With truncation: the further windows of a long text (each `stride` tokens overlapping the
  /// previous one), post-processed like the first.
  std::vector<TokenizedText> overflowing;
};

struct TokenizerOptions {
  /// Truncate to this many tokens, special tokens included; 0 = the file's own truncation (or
  /// tokenizer_config.json's model_max_length when asked for with use_model_max_length).
  std::size_t max_length = 0;
  /// Tokens shared by consecutive windows of a truncated text; must be below max_length less
  /// the special tokens.
  std::size_t stride = 0;
  /// Truncate to tokenizer_config.json's model_max_length next to the file when max_length is 0.
  bool use_model_max_length = false;
};

/// Thread-safety: encode() may be called concurrently from any thread.
class TextTokenizer {
 public:
  virtual ~TextTokenizer() = default;
  /// Throws ClassifyError on invalid UTF-8 (naming the byte offset) or a text the model cannot
  /// represent.
  virtual TokenizedText encode(std::string_view text, bool add_special_tokens = true) const = 0;
  /// A sentence pair (NLI's premise and hypothesis, a cross-encoder's query and passage) as the
  /// reference encodes `encode(text, text_pair)`: both texts tokenized, truncated together to the
  /// maximum length (longest first, as the tokenizer's truncation strategy says), then the
  /// post-processor's pair template with its token types. `offsets` index each token's own
  /// text; no overflowing windows. The default throws ClassifyError: only tokenizer.json files
  /// describe a pair template.
  virtual TokenizedText encode_pair(std::string_view text, std::string_view text_pair,
                                    bool add_special_tokens = true) const;
  /// Every id is below it.
  virtual std::size_t vocab_size() const = 0;
};

/// Opens `path` by its type: a JSON file is a tokenizer.json, a `.txt` a WordPiece vocab.txt
/// (BERT's uncased pipeline, or cased when tokenizer_config.json next to it says
/// do_lower_case false), anything else a sentencepiece `.model`. Throws ClassifyError naming the
/// file and the problem.
std::unique_ptr<TextTokenizer> open_text_tokenizer(const std::string& path,
                                                   const TokenizerOptions& options = {});

}  // namespace mcpclass::tokenizers
