#include "tokenizers/sentencepiece_model_writer.hpp"

#include "util/protobuf_writer.hpp"

#include <boost/json.hpp>

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <unordered_map>

namespace mcpclass::tokenizers {

using util::protobuf::bytes_field;
using util::protobuf::float_field;
using util::protobuf::int_field;

std::string write_unigram_model(const std::vector<PieceEntry>& pieces,
                                std::string_view normalizer_spec) {
  std::string model;
  for (const auto& p : pieces) {
    std::string piece;
    bytes_field(piece, 1, p.piece);
    float_field(piece, 2, p.score);
    int_field(piece, 3, static_cast<int>(p.type));
    bytes_field(model, 1, piece);
  }
  std::string trainer;
  int_field(trainer, 3, 1);  // model_type UNIGRAM
  int_field(trainer, 4, static_cast<std::int64_t>(pieces.size()));
  int_field(trainer, 40, 0);   // unk_id
  int_field(trainer, 41, 1);   // bos_id
  int_field(trainer, 42, 2);   // eos_id
  int_field(trainer, 43, -1);  // pad_id
  bytes_field(model, 2, trainer);
  // Later occurrences of a scalar field win when protobuf parses, so appending overrides the
  // trainer's defaults while keeping its precompiled character map.
  std::string normalizer(normalizer_spec);
  int_field(normalizer, 3, 1);  // add_dummy_prefix
  int_field(normalizer, 4, 0);  // remove_extra_whitespaces
  int_field(normalizer, 5, 1);  // escape_whitespaces
  bytes_field(model, 3, normalizer);
  return model;
}

std::vector<PieceEntry> pieces_from_tfjs_vocab(std::string_view vocab_json) {
  boost::system::error_code ec;
  const auto doc = boost::json::parse(vocab_json, ec);
  if (ec || !doc.is_array()) throw std::runtime_error("vocab.json is not a JSON array");
  const auto& rows = doc.as_array();
  if (rows.size() < 7) throw std::runtime_error("vocab.json has too few pieces");
  std::vector<PieceEntry> pieces;
  pieces.reserve(rows.size());
  std::unordered_map<std::string, std::size_t> last;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto* row = rows[i].if_array();
    if (row == nullptr || row->empty() || !(*row)[0].is_string())
      throw std::runtime_error("vocab.json entry " + std::to_string(i) + " is not [piece, score]");
    PieceEntry e;
    e.piece = std::string((*row)[0].as_string());
    if (row->size() > 1 && (*row)[1].is_number())
      e.score = static_cast<float>((*row)[1].to_number<double>());
    if (i == 0) {
      e = {"<unk>", 0.0f, PieceType::unknown};
    } else if (i < 6) {
      e.type = PieceType::control;
      e.score = 0.0f;
    } else {
      last[e.piece] = i;
    }
    pieces.push_back(std::move(e));
  }
  for (std::size_t i = 6; i < pieces.size(); ++i) {
    if (last[pieces[i].piece] != i)
      pieces[i] = {"<unused_" + std::to_string(i) + ">", 0.0f, PieceType::unused};
  }
  return pieces;
}

}  // namespace mcpclass::tokenizers
