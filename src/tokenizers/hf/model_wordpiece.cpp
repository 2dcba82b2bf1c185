// WordPiece: greedy longest-match-first within a word, `##` on continuing pieces; a word with an
// unmatchable rest, or longer than max_input_chars_per_word, is the unknown token.
#include "mcpclass/classify/errors.hpp"
#include "tokenizers/hf/json_fields.hpp"
#include "tokenizers/hf/models.hpp"

#include <boost/json.hpp>

namespace mcpclass::tokenizers::hf {

namespace {

class WordPiece final : public VocabularyModel {
 public:
  WordPiece(Vocab vocab, std::string unk, std::string prefix, std::size_t max_chars)
      : VocabularyModel(std::move(vocab)),
        unk_(std::move(unk)),
        prefix_(std::move(prefix)),
        max_chars_(max_chars) {}

  void tokenize(std::string_view word, std::vector<Token>& out) const override {
    std::size_t chars = 0;
    for (char c : word) chars += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
    if (chars > max_chars_) return push_unk(word, out);
    const std::size_t first = out.size();
    std::string buf = prefix_;
    std::size_t start = 0;
    while (start < word.size()) {
      std::size_t end = word.size();
      bool found = false;
      while (start < end) {
        std::string_view sub = word.substr(start, end - start);
        const Vocab::const_iterator it = start > 0 ? find_prefixed(buf, sub) : vocab_.find(sub);
        if (it != vocab_.end()) {
          out.push_back({it->second, it->first, static_cast<std::uint32_t>(start),
                         static_cast<std::uint32_t>(end)});
          found = true;
          break;
        }
        // Step back one character.
        do --end;
        while (end > start && (static_cast<unsigned char>(word[end]) & 0xC0) == 0x80);
      }
      if (!found) {
        out.resize(first);
        return push_unk(word, out);
      }
      start = end;
    }
  }

 private:
  Vocab::const_iterator find_prefixed(std::string& buf, std::string_view sub) const {
    buf.resize(prefix_.size());
    buf.append(sub);
    return vocab_.find(std::string_view(buf));
  }
  void push_unk(std::string_view word, std::vector<Token>& out) const {
    auto it = vocab_.find(std::string_view(unk_));
    if (it == vocab_.end())
      throw classify::ClassifyError("WordPiece: the unknown token '" + unk_ +
                                    "' is not in the vocabulary");
    out.push_back({it->second, unk_, 0, static_cast<std::uint32_t>(word.size())});
  }

  std::string unk_;
  std::string prefix_;
  std::size_t max_chars_;
};

}  // namespace

std::unique_ptr<Model> make_wordpiece(const boost::json::object& o) {
  return std::make_unique<WordPiece>(
      read_vocab(o, "WordPiece"), string_field_or(o, "unk_token", "[UNK]"),
      string_field_or(o, "continuing_subword_prefix", "##"),
      static_cast<std::size_t>(int_field_or(o, "max_input_chars_per_word", 100)));
}

}  // namespace mcpclass::tokenizers::hf
