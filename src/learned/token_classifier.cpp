// make_token_classifier: a *ForTokenClassification checkpoint of any supported architecture
// (token_model.hpp) behind the TokenClassifier interface, its spans merged by token_spans.hpp.
#include "mcpclass/learned/token_classifier.hpp"

#include "architectures/common/token_model.hpp"
#include "learned/compute_choice.hpp"
#include "learned/token_spans.hpp"
#include "mcpclass/classify/errors.hpp"
#include "mcpclass/learned/learned_settings.hpp"
#include "mcpclass/tokenizers/text_tokenizer.hpp"
#include "tokenizers/hf/tokenizer_files.hpp"

#include <algorithm>
#include <filesystem>

namespace mcpclass::learned {

using classify::ClassifyError;

namespace {

// Activation rows of one forward pass: a long text's windows are run in bounded batches.
constexpr std::size_t kMaxBatchRows = 8192;

// What the pipeline reads from tokenizer.json and tokenizer_config.json: the unknown token, the
// decoder, and whether the model marks continued words (continuing_subword_prefix).
detail::SpanRules span_rules(const std::string& tokenizer_path,
                             const std::vector<std::string>& labels,
                             const TokenClassifierSettings& settings) {
  const auto document =
      tokenizers::hf::parse_json(tokenizers::hf::read_text_file(tokenizer_path), tokenizer_path);
  const auto* doc = document.if_object();
  const auto* model = doc != nullptr ? doc->if_contains("model") : nullptr;
  const auto* m = model != nullptr ? model->if_object() : nullptr;
  if (m == nullptr) throw ClassifyError("'" + tokenizer_path + "' has no 'model'");
  const auto type = tokenizers::hf::config_token(*m, "type", "");
  // transformers' WordPiece model always has a prefix ("##" unless set); BPE only when set.
  const auto prefix = tokenizers::hf::config_token(*m, "continuing_subword_prefix",
                                                   type == "WordPiece" ? "##" : "");
  const auto* decoder = doc->if_contains("decoder");
  detail::SpanRules rules{
      labels,
      tokenizers::hf::config_token(tokenizers::hf::sibling_config(tokenizer_path), "unk_token",
                                   tokenizers::hf::config_token(*m, "unk_token", "")),
      (type == "WordPiece" || type == "BPE") && !prefix.empty(),
      tokenizers::hf::TokenDecoder(decoder != nullptr ? *decoder : boost::json::value()),
      settings.ignore_labels,
  };
  return rules;
}

class CheckpointTokenClassifier final : public TokenClassifier {
 public:
  explicit CheckpointTokenClassifier(const TokenClassifierSettings& s)
      : settings_(s),
        dir_(resolve_model_path(s.model)),
        compute_(detail::choose_compute(s.precision, s.kernels, "model '" + s.model + "'")),
        model_(architectures::open_token_model(dir_, {}, {}, compute_)) {
    const auto& m = *model_;
    const auto tokenizer = (std::filesystem::path(dir_) / "tokenizer.json").string();
    tokenizers::TokenizerOptions options;
    options.max_length =
        s.max_tokens == 0 ? m.max_tokens() : std::min(s.max_tokens, m.max_tokens());
    options.stride = s.stride;
    max_tokens_ = options.max_length;
    tokenizer_ = tokenizers::open_text_tokenizer(tokenizer, options);
    if (tokenizer_->vocab_size() > m.vocab())
      throw ClassifyError("'" + tokenizer + "' has " + std::to_string(tokenizer_->vocab_size()) +
                          " tokens but '" + m.config_file() + "' vocab_size is " +
                          std::to_string(m.vocab()));
    rules_ = std::make_unique<detail::SpanRules>(span_rules(tokenizer, m.labels(), s));
  }

  std::vector<TokenSpan> detect(std::string_view text,
                                std::optional<TokenAggregation> aggregation) const override {
    const auto a = aggregation.value_or(settings_.aggregation);
    const auto encoded = tokenizer_->encode(text);
    // The pipeline reads a long text through stride windows, but only its first window with
    // `none` (a stride with none is refused there).
    std::vector<const tokenizers::TokenizedText*> windows{&encoded};
    if (a != TokenAggregation::none)
      for (const auto& w : encoded.overflowing) windows.push_back(&w);
    std::erase_if(windows, [](const tokenizers::TokenizedText* w) { return w->ids.empty(); });
    std::vector<std::vector<float>> logits;
    for (std::size_t begin = 0; begin < windows.size();) {
      std::vector<architectures::BertInput> inputs;
      std::size_t rows = 0;
      for (std::size_t i = begin; i < windows.size(); ++i) {
        const auto r = kernels::padded_rows(windows[i]->ids.size());
        if (!inputs.empty() && rows + r > kMaxBatchRows) break;
        rows += r;
        inputs.push_back({windows[i]->ids, windows[i]->type_ids});
      }
      for (auto& l : model_->logits(inputs, settings_.threads)) logits.push_back(std::move(l));
      begin += inputs.size();
    }
    std::vector<detail::SpanWindow> spans;
    for (std::size_t i = 0; i < windows.size(); ++i) spans.push_back({windows[i], logits[i]});
    return detail::aggregate_spans(text, spans, a, *rules_);
  }

  TokenAggregation aggregation() const override { return settings_.aggregation; }
  const std::vector<std::string>& labels() const override { return model_->labels(); }

  json::object info() const override {
    json::array labels;
    for (const auto& l : model_->labels()) labels.emplace_back(l);
    json::object o{{"model", settings_.model},    {"architecture", model_->architecture()},
                   {"labels", std::move(labels)}, {"aggregation", to_string(settings_.aggregation)},
                   {"stride", settings_.stride},  {"max_tokens", max_tokens_}};
    for (auto& [key, value] : detail::describe_compute(compute_)) o[key] = value;
    return o;
  }

 private:
  TokenClassifierSettings settings_;
  std::string dir_;
  kernels::Compute compute_;
  std::unique_ptr<architectures::TokenModel> model_;
  std::unique_ptr<tokenizers::TextTokenizer> tokenizer_;
  std::unique_ptr<detail::SpanRules> rules_;
  std::size_t max_tokens_ = 0;
};

}  // namespace

std::unique_ptr<TokenClassifier> make_token_classifier(const TokenClassifierSettings& settings) {
  return std::make_unique<CheckpointTokenClassifier>(settings);
}

}  // namespace mcpclass::learned
