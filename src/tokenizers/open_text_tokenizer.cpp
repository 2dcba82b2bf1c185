// open_text_tokenizer: the file's type picks the tokenizer (include/mcpclass/tokenizers/
// text_tokenizer.hpp).
#include "mcpclass/classify/errors.hpp"
#include "mcpclass/tokenizers/text_tokenizer.hpp"
#include "tokenizers/hf/json_tokenizer.hpp"
#include "tokenizers/hf/tokenizer_files.hpp"

#if MCPCLASS_WITH_LEARNED
#include "tokenizers/tokenizer_sentencepiece.hpp"
#endif

#include <boost/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace mcpclass::tokenizers {

using classify::ClassifyError;

namespace {

using hf::config_token;
using hf::parse_json;
using hf::read_text_file;
using hf::sibling_config;

std::size_t model_max_length(const boost::json::object& config) {
  const auto* v = config.if_contains("model_max_length");
  // Transformers writes 1e30 for "no limit".
  if (v == nullptr || !v->is_number()) return 0;
  const double d = v->to_number<double>();
  return d >= 1 && d <= 1e7 ? static_cast<std::size_t>(d) : 0;
}

// A BERT vocab.txt (one token per line, id = line number) as the tokenizer.json that
// transformers builds for it: BertNormalizer, BertPreTokenizer, WordPiece, [CLS] $A [SEP].
boost::json::value bert_document(const std::string& path, const boost::json::object& config) {
  const std::string text = read_text_file(path);
  boost::json::object vocab;
  std::size_t id = 0, begin = 0;
  while (begin < text.size()) {
    std::size_t end = text.find('\n', begin);
    if (end == std::string::npos) end = text.size();
    std::string token = text.substr(begin, end - begin);
    if (!token.empty() && token.back() == '\r') token.pop_back();
    if (!vocab.contains(token)) vocab[token] = id;
    ++id;
    begin = end + 1;
  }
  const bool lower = !config.contains("do_lower_case") || !config.at("do_lower_case").is_bool() ||
                     config.at("do_lower_case").get_bool();
  const std::string unk = config_token(config, "unk_token", "[UNK]");
  const std::string cls = config_token(config, "cls_token", "[CLS]");
  const std::string sep = config_token(config, "sep_token", "[SEP]");
  boost::json::array added;
  for (const std::string& t : {config_token(config, "pad_token", "[PAD]"), unk, cls, sep,
                               config_token(config, "mask_token", "[MASK]")}) {
    if (const auto* v = vocab.if_contains(t))
      added.push_back({{"id", *v}, {"content", t}, {"special", true}, {"normalized", false}});
  }
  auto id_of = [&](const std::string& t) -> boost::json::value {
    const auto* v = vocab.if_contains(t);
    if (v == nullptr) throw classify::ClassifyError("'" + path + "' has no '" + t + "' token");
    return *v;
  };
  boost::json::object doc;
  doc["added_tokens"] = added;
  doc["normalizer"] = {{"type", "BertNormalizer"}, {"lowercase", lower}};
  doc["pre_tokenizer"] = {{"type", "BertPreTokenizer"}};
  doc["post_processor"] = {{"type", "BertProcessing"},
                           {"cls", boost::json::array{cls, id_of(cls)}},
                           {"sep", boost::json::array{sep, id_of(sep)}}};
  doc["model"] = {{"type", "WordPiece"}, {"unk_token", unk}, {"vocab", vocab}};
  return doc;
}

#if MCPCLASS_WITH_LEARNED
// A sentencepiece .model: ids only.
class SentencePieceText final : public TextTokenizer {
 public:
  explicit SentencePieceText(const std::string& path) : spm_(path) {}
  TokenizedText encode(std::string_view text, bool) const override {
    TokenizedText out;
    out.ids = spm_.encode(text);
    return out;
  }
  std::size_t vocab_size() const override { return spm_.piece_count(); }

 private:
  SentencePieceTokenizer spm_;
};
#endif

bool looks_like_json(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char c = 0;
  while (in.get(c))
    if (!std::isspace(static_cast<unsigned char>(c))) return c == '{';
  return false;
}

}  // namespace

TokenizedText TextTokenizer::encode_pair(std::string_view, std::string_view, bool) const {
  throw classify::ClassifyError(
      "this tokenizer has no pair template: sentence pairs need a tokenizer.json (its "
      "post_processor's pair template)");
}

std::unique_ptr<TextTokenizer> open_text_tokenizer(const std::string& path,
                                                   const TokenizerOptions& options) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw classify::ClassifyError("tokenizer '" + path + "' is not a readable file");
  const auto config = sibling_config(path);
  if (looks_like_json(path)) {
    try {
      return std::make_unique<hf::JsonTokenizer>(parse_json(read_text_file(path), path), options,
                                                 model_max_length(config));
    } catch (const classify::ClassifyError& e) {
      throw classify::ClassifyError("tokenizer '" + path + "': " + e.what());
    }
  }
  if (std::filesystem::path(path).extension() == ".txt") {
    try {
      return std::make_unique<hf::JsonTokenizer>(bert_document(path, config), options,
                                                 model_max_length(config));
    } catch (const classify::ClassifyError& e) {
      throw classify::ClassifyError("tokenizer '" + path + "': " + e.what());
    }
  }
#if MCPCLASS_WITH_LEARNED
  return std::make_unique<SentencePieceText>(path);
#else
  throw classify::ClassifyError(
      "tokenizer '" + path +
      "' is not a tokenizer.json or vocab.txt, and sentencepiece models need a "
      "build with MCPCLASS_WITH_LEARNED");
#endif
}

}  // namespace mcpclass::tokenizers
