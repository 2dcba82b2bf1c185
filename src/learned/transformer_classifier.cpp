#include "learned/transformer_classifier.hpp"

#include "learned/bert_model.hpp"
#include "learned/bert_token_model.hpp"
#include "learned/checkpoint_config.hpp"
#include "learned/label_map.hpp"
#include "mcpclass/classify/errors.hpp"
#include "mcpclass/learned/learned_classifier.hpp"
#include "mcpclass/learned/text_tokenizer.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>

namespace mcpclass::learned {
using classify::CategorySet;
using classify::Classification;
using classify::Classifier;
using classify::ClassifyError;
using classify::ClassifyOptions;
using classify::make_classification;
using classify::RoutingPolicy;
}  // namespace mcpclass::learned

namespace mcpclass::learned::detail {

namespace {

// Activation rows of one forward pass: a large batch is split so its activations stay bounded
// (each row holds 5 × hidden + intermediate floats).
constexpr std::size_t kMaxBatchRows = 8192;

class TransformerClassifier final : public Classifier {
 public:
  TransformerClassifier(CategorySet categories, const LearnedSettings& s, RoutingPolicy policy)
      : categories_(std::move(categories)),
        settings_(s),
        policy_(std::move(policy)),
        dir_(resolve_model_path(s.model)),
        model_(dir_) {
    const auto& c = model_.config();
    map_ = output_to_category(categories_, c.labels, "model '" + s.model + "'");
    const auto tokenizer = (std::filesystem::path(dir_) / "tokenizer.json").string();
    TokenizerOptions options;
    options.max_length = std::min(s.max_tokens, c.max_tokens());
    tokenizer_ = open_text_tokenizer(tokenizer, options);
    if (tokenizer_->vocab_size() > c.vocab)
      throw ClassifyError("'" + tokenizer + "' has " + std::to_string(tokenizer_->vocab_size()) +
                          " tokens but '" + c.file + "' vocab_size is " + std::to_string(c.vocab));
  }

  const CategorySet& categories() const override { return categories_; }
  std::string kind() const override { return "transformer"; }

  Classification classify(std::string_view text, const ClassifyOptions& options) const override {
    return classify_batch(std::span(&text, 1), options).front();
  }

  std::vector<Classification> classify_batch(std::span<const std::string_view> texts,
                                             const ClassifyOptions&) const override {
    std::vector<TokenizedText> tokens;
    tokens.reserve(texts.size());
    for (const auto text : texts) tokens.push_back(tokenizer_->encode(text));
    std::vector<Classification> out;
    out.reserve(texts.size());
    for (std::size_t begin = 0; begin < texts.size();) {
      std::vector<BertInput> inputs;
      std::size_t count = 0;
      for (std::size_t i = begin; i < texts.size(); ++i) {
        const auto rows = BertSequenceModel::rows_for(tokens[i].ids.size());
        if (!inputs.empty() && count + rows > kMaxBatchRows) break;
        count += rows;
        inputs.push_back({tokens[i].ids, tokens[i].type_ids});
      }
      const auto logits = model_.logits(inputs, settings_.threads);
      const std::size_t labels = model_.config().labels.size();
      for (std::size_t b = 0; b < inputs.size(); ++b) {
        const std::span<const float> row(logits.data() + b * labels, labels);
        out.push_back(make_classification(texts[begin + b], categories_,
                                          scores_from_logits(row, map_), policy_));
      }
      begin += inputs.size();
    }
    return out;
  }

  json::object info() const override {
    return {{"kind", kind()},
            {"model", settings_.model},
            {"architecture", model_.config().architecture},
            {"index_size", 0}};
  }

 private:
  CategorySet categories_;
  LearnedSettings settings_;
  RoutingPolicy policy_;
  std::string dir_;
  BertSequenceModel model_;
  std::unique_ptr<TextTokenizer> tokenizer_;
  std::vector<std::size_t> map_;
};

// The `model.type` of a tokenizer.json (WordPiece, BPE, Unigram, WordLevel), for inspection.
std::string tokenizer_model_type(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), {});
  boost::system::error_code ec;
  const auto doc = json::parse(text, ec);
  const auto* model = ec || !doc.is_object() ? nullptr : doc.as_object().if_contains("model");
  const auto* type =
      model != nullptr && model->is_object() ? model->as_object().if_contains("type") : nullptr;
  return type != nullptr && type->is_string() ? std::string(type->as_string()) : "unknown";
}

}  // namespace

std::unique_ptr<Classifier> make_transformer_classifier(const CategorySet& categories,
                                                        const LearnedSettings& settings,
                                                        const RoutingPolicy& policy) {
  return std::make_unique<TransformerClassifier>(categories, settings, policy);
}

}  // namespace mcpclass::learned::detail

namespace mcpclass::learned::detail {

namespace {

// What `mcpclass model inspect` prints for a checkpoint of either head; `head` says what the
// head computes from the encoder's hidden states.
template <class Model>
json::object describe(const Model& model, const std::string& dir, const std::string& head) {
  const auto& c = model.config();
  const auto tokenizer_path = (std::filesystem::path(dir) / "tokenizer.json").string();
  const auto tokenizer = open_text_tokenizer(tokenizer_path);
  json::array labels;
  for (const auto& l : c.labels) labels.emplace_back(l);
  return {
      {"architecture", c.architecture},
      {"family", c.family == BertFamily::bert ? "bert" : "roberta"},
      {"hidden_size", c.hidden},
      {"num_hidden_layers", c.layers},
      {"num_attention_heads", c.heads},
      {"intermediate_size", c.intermediate},
      {"vocab_size", c.vocab},
      {"max_tokens", c.max_tokens()},
      {"parameters", model.parameters()},
      {"labels", std::move(labels)},
      {"tokenizer", json::object{{"file", tokenizer_path},
                                 {"model", tokenizer_model_type(tokenizer_path)},
                                 {"vocab_size", tokenizer->vocab_size()}}},
      {"compute", "float32 on oneDNN sgemm: embeddings, " + std::to_string(c.layers) +
                      " post-norm encoder layers (self-attention, " +
                      (c.activation == HiddenActivation::gelu        ? "exact GELU"
                       : c.activation == HiddenActivation::gelu_tanh ? "tanh GELU"
                                                                     : "ReLU") +
                      "), " + head},
  };
}

}  // namespace

}  // namespace mcpclass::learned::detail

namespace mcpclass::learned {

json::object inspect_checkpoint(const std::string& dir) {
  const auto config = detail::read_checkpoint_config(dir);
  const auto* arch = config.if_contains("architectures");
  const bool token = arch != nullptr && arch->is_array() && arch->as_array().size() == 1 &&
                     arch->as_array()[0].is_string() &&
                     arch->as_array()[0].as_string().ends_with("ForTokenClassification");
  if (token) {
    const detail::BertTokenModel model(dir);
    return detail::describe(model, dir,
                            "then every token's final hidden state through classifier: " +
                                std::to_string(model.config().labels.size()) +
                                " logits a token, softmax, spans merged as the transformers "
                                "token-classification pipeline does (token_classifier)");
  }
  const detail::BertSequenceModel model(dir);
  const auto& c = model.config();
  return detail::describe(
      model, dir,
      std::string("the first token through ") +
          (c.family == detail::BertFamily::bert ? "the pooler" : "classifier.dense") +
          " and tanh, then " + std::to_string(c.labels.size()) + " logits and softmax");
}

}  // namespace mcpclass::learned
