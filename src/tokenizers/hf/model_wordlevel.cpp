// WordLevel: each piece is one vocabulary entry, or the unknown token.
#include "mcpclass/classify/errors.hpp"
#include "tokenizers/hf/json_fields.hpp"
#include "tokenizers/hf/models.hpp"

#include <boost/json.hpp>

namespace mcpclass::tokenizers::hf {

namespace {

class WordLevel final : public VocabularyModel {
 public:
  WordLevel(Vocab vocab, std::string unk)
      : VocabularyModel(std::move(vocab)), unk_(std::move(unk)) {}
  void tokenize(std::string_view word, std::vector<Token>& out) const override {
    auto it = vocab_.find(word);
    if (it == vocab_.end()) it = vocab_.find(std::string_view(unk_));
    if (it == vocab_.end())
      throw classify::ClassifyError("WordLevel: the unknown token '" + unk_ +
                                    "' is not in the vocabulary");
    out.push_back({it->second, it->first, 0, static_cast<std::uint32_t>(word.size())});
  }

 private:
  std::string unk_;
};

}  // namespace

std::unique_ptr<Model> make_wordlevel(const boost::json::object& o) {
  return std::make_unique<WordLevel>(read_vocab(o, "WordLevel"),
                                     string_field_or(o, "unk_token", "<unk>"));
}

}  // namespace mcpclass::tokenizers::hf
