// Internal: writes a sentencepiece ModelProto (unigram) without protobuf headers, so a vocabulary
// from elsewhere (TF.js's vocab.json) becomes a `.model` file libsentencepiece loads.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace mcpclass::tokenizers {

/// sentencepiece's SentencePiece.Type values.
enum class PieceType { normal = 1, unknown = 2, control = 3, user_defined = 4, unused = 5 };

struct PieceEntry {
  std::string piece;
  float score = 0.0f;
  PieceType type = PieceType::normal;
};

/// Serialized ModelProto: the pieces in id order, a unigram TrainerSpec (unk 0, bos 1, eos 2, no
/// pad) and `normalizer_spec` (serialized NormalizerSpec) with add_dummy_prefix and
/// escape_whitespaces on and remove_extra_whitespaces off, as the TF.js tokenizer behaves.
std::string write_unigram_model(const std::vector<PieceEntry>& pieces,
                                std::string_view normalizer_spec);

/// TF.js USE vocabulary (`[[piece, score], ...]`) → pieces: id 0 is the unknown piece, ids 1..5
/// control pieces, null scores become 0, and when a piece repeats the LAST occurrence keeps it
/// (as in the TF.js trie); earlier repeats become unused placeholders so ids stay aligned.
/// Throws std::runtime_error on a malformed vocabulary.
std::vector<PieceEntry> pieces_from_tfjs_vocab(std::string_view vocab_json);

}  // namespace mcpclass::tokenizers
