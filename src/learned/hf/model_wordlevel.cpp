// WordLevel: each piece is one vocabulary entry, or the unknown token.
#include "learned/hf/json_fields.hpp"
#include "learned/hf/models.hpp"
#include "mcpclass/classify/errors.hpp"

#include <boost/json.hpp>

namespace mcpclass::classify::hf {

namespace {

class WordLevel final : public Model {
 public:
  WordLevel(Vocab vocab, std::string unk)
      : vocab_(std::move(vocab)), by_id_(reverse_vocab(vocab_)), unk_(std::move(unk)) {}
  void tokenize(std::string_view word, std::vector<Token>& out) const override {
    auto it = vocab_.find(word);
    if (it == vocab_.end()) it = vocab_.find(std::string_view(unk_));
    if (it == vocab_.end())
      throw ClassifyError("WordLevel: the unknown token '" + unk_ + "' is not in the vocabulary");
    out.push_back({it->second, it->first, 0, static_cast<std::uint32_t>(word.size())});
  }
  std::optional<std::int32_t> token_to_id(std::string_view t) const override {
    auto it = vocab_.find(t);
    if (it == vocab_.end()) return std::nullopt;
    return it->second;
  }
  std::string id_to_token(std::int32_t id) const override {
    return id >= 0 && static_cast<std::size_t>(id) < by_id_.size()
               ? by_id_[static_cast<std::size_t>(id)]
               : "";
  }

 private:
  Vocab vocab_;
  std::vector<std::string> by_id_;
  std::string unk_;
};

}  // namespace

std::unique_ptr<Model> make_wordlevel(const boost::json::object& o) {
  return std::make_unique<WordLevel>(read_vocab(o, "WordLevel"),
                                     string_field_or(o, "unk_token", "<unk>"));
}

}  // namespace mcpclass::classify::hf
