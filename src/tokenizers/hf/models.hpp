// The models of tokenizer.json ("model" block): WordPiece, BPE, Unigram, WordLevel. Each turns
// one pre-tokenized piece into tokens.
#pragma once

#include "tokenizers/hf/pieces.hpp"

#include <boost/json/fwd.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace mcpclass::tokenizers::hf {

struct StringHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
using Vocab = std::unordered_map<std::string, std::int32_t, StringHash, std::equal_to<>>;

/// Immutable after construction (caches are internally synchronised); tokenize() may be called
/// concurrently.
class Model {
 public:
  virtual ~Model() = default;
  /// Appends the tokens of `piece` (offsets are bytes of `piece`). Throws ClassifyError when the
  /// model cannot represent it (e.g. no unknown token).
  virtual void tokenize(std::string_view piece, std::vector<Token>& out) const = 0;
  virtual std::optional<std::int32_t> token_to_id(std::string_view token) const = 0;
  /// The token of `id`, or empty when the model has none.
  virtual std::string id_to_token(std::int32_t id) const = 0;
};

/// A model over a {token: id} vocabulary (WordPiece, BPE, WordLevel): the lookups both ways.
class VocabularyModel : public Model {
 public:
  explicit VocabularyModel(Vocab vocab);
  std::optional<std::int32_t> token_to_id(std::string_view token) const override;
  std::string id_to_token(std::int32_t id) const override;

 protected:
  Vocab vocab_;
  std::vector<std::string> by_id_;
};

/// Throws ClassifyError naming an unknown type or a bad field.
std::unique_ptr<Model> make_model(const boost::json::value& block);

std::unique_ptr<Model> make_wordpiece(const boost::json::object& o);
std::unique_ptr<Model> make_bpe(const boost::json::object& o);
std::unique_ptr<Model> make_unigram(const boost::json::object& o);
std::unique_ptr<Model> make_wordlevel(const boost::json::object& o);

/// Reads a {"token": id} object. Throws ClassifyError.
Vocab read_vocab(const boost::json::object& o, const std::string& what);
/// id → token for a vocabulary.
std::vector<std::string> reverse_vocab(const Vocab& vocab);

}  // namespace mcpclass::tokenizers::hf
