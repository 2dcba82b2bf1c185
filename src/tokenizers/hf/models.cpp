#include "tokenizers/hf/models.hpp"

#include "mcpclass/classify/errors.hpp"
#include "tokenizers/hf/json_fields.hpp"

#include <boost/json.hpp>

namespace mcpclass::tokenizers::hf {

Vocab read_vocab(const boost::json::object& o, const std::string& what) {
  const auto* v = o.if_contains("vocab");
  if (v == nullptr || !v->is_object())
    throw classify::ClassifyError(what + ": 'vocab' must be an object");
  Vocab vocab;
  vocab.reserve(v->get_object().size());
  for (const auto& [k, id] : v->get_object()) {
    const std::int64_t n = integer_or_minus_one(id);
    if (n < 0 || n > INT32_MAX)
      throw classify::ClassifyError(what + ": the id of '" + std::string(k) +
                                    "' is not a valid id");
    vocab.emplace(std::string(k), static_cast<std::int32_t>(n));
  }
  return vocab;
}

std::vector<std::string> reverse_vocab(const Vocab& vocab) {
  std::vector<std::string> out;
  for (const auto& [k, id] : vocab) {
    if (static_cast<std::size_t>(id) >= out.size()) out.resize(static_cast<std::size_t>(id) + 1);
    out[static_cast<std::size_t>(id)] = k;
  }
  return out;
}

VocabularyModel::VocabularyModel(Vocab vocab)
    : vocab_(std::move(vocab)), by_id_(reverse_vocab(vocab_)) {}

std::optional<std::int32_t> VocabularyModel::token_to_id(std::string_view token) const {
  auto it = vocab_.find(token);
  if (it == vocab_.end()) return std::nullopt;
  return it->second;
}

std::string VocabularyModel::id_to_token(std::int32_t id) const {
  return id >= 0 && static_cast<std::size_t>(id) < by_id_.size()
             ? by_id_[static_cast<std::size_t>(id)]
             : std::string();
}

std::unique_ptr<Model> make_model(const boost::json::value& block) {
  const auto& o = as_object(block, "model");
  // Files written before `type` was serialised: infer from the fields.
  std::string type = string_field_or(o, "type", "");
  if (type.empty()) {
    if (o.contains("merges"))
      type = "BPE";
    else if (o.contains("continuing_subword_prefix"))
      type = "WordPiece";
    else if (o.contains("vocab") && o.at("vocab").is_array())
      type = "Unigram";
    else
      type = "WordLevel";
  }
  if (type == "WordPiece") return make_wordpiece(o);
  if (type == "BPE") return make_bpe(o);
  if (type == "Unigram") return make_unigram(o);
  if (type == "WordLevel") return make_wordlevel(o);
  throw classify::ClassifyError("unsupported model type '" + type + "'");
}

}  // namespace mcpclass::tokenizers::hf
