#include "learned/sentence_transformer_encoder.hpp"
#include "learned/compute_choice.hpp"

#include "architectures/common/sequence_model.hpp"
#include "architectures/sentence_transformers/sentence_transformer_model.hpp"
#include "learned/learned_errors.hpp"
#include "learned/length_batches.hpp"
#include "mcpclass/learned/learned_settings.hpp"
#include "mcpclass/tokenizers/text_tokenizer.hpp"
#include "tokenizers/hf/normalizers.hpp"
#include "tokenizers/hf/unicode.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <filesystem>

namespace mcpclass::learned::detail {

namespace fs = std::filesystem;

namespace {

// Activation rows of one forward pass (as transformer_classifier.cpp bounds them).
constexpr std::size_t kMaxBatchRows = 8192;

// Transformer.tokenize: str.strip(), then str.lower() when do_lower_case (the tokenizer.json
// normalizers Strip and Lowercase compute the same on Unicode text).
std::unique_ptr<tokenizers::hf::Normalizer> text_preparation(bool lowercase) {
  boost::json::array steps{boost::json::object{{"type", "Strip"}}};
  if (lowercase) steps.push_back(boost::json::object{{"type", "Lowercase"}});
  return tokenizers::hf::make_normalizer(
      boost::json::object{{"type", "Sequence"}, {"normalizers", steps}});
}

// The checksum of everything that decides the embeddings, `prompt` (the text prepended) too.
std::string directory_id(const architectures::SentenceTransformerModel& m,
                         const std::string& prompt) {
  const auto& c = m.config();
  const fs::path t(c.transformer_dir);
  const auto weights = fs::exists(t / "model.safetensors") ? t / "model.safetensors"
                                                           : t / "model.safetensors.index.json";
  std::string all = c.pooling.describe() + (c.normalize ? "+normalize" : "") +
                    (c.do_lower_case ? "+lower" : "") + std::to_string(m.max_tokens());
  // A Matryoshka cut is another embedding space: an index or a cache of one must not serve it.
  if (m.layers() != m.model_layers() || m.dimension() != c.dimension())
    all += "+layers" + std::to_string(m.layers()) + "+dimensions" + std::to_string(m.dimension());
  // Another prompt is another embedding space too.
  if (!prompt.empty()) all += "+prompt" + text_checksum(prompt);
  for (const auto& f : {fs::path(c.modules_file), fs::path(c.pooling_file), t / "config.json",
                        weights, t / "tokenizer.json"})
    all += file_checksum(f.string());
  for (const auto& d : c.dense)
    for (const auto& f : {fs::path(d.file), fs::path(d.dir) / "model.safetensors"})
      all += file_checksum(f.string());
  return text_checksum(all);
}

class SentenceTransformerEncoder final : public TokenSentenceEncoder {
 public:
  explicit SentenceTransformerEncoder(const EncoderOptions& options)
      : options_(options),
        model_(options.encoder_path, {},
               detail::choose_compute(options.precision, options.kernels,
                                      "encoder '" + options.encoder_path + "'"),
               {.layers = options.layers, .dimensions = options.dimensions}) {
    if (options.max_tokens == 0 || options.batch_size == 0)
      throw ClassifyError("max_tokens and batch_size must be positive");
    max_tokens_ = std::min(options.max_tokens, model_.max_tokens());
    const auto file = (fs::path(model_.config().transformer_dir) / "tokenizer.json").string();
    tokenizers::TokenizerOptions t;
    t.max_length = max_tokens_;
    tokenizer_ = tokenizers::open_text_tokenizer(file, t);
    // A decoder's tokenizer may hold added tokens past its embeddings (Gemma 3's text models keep
    // the multimodal tokenizer's <image_soft_token>): the ids a text gives are checked as it is
    // encoded instead, as indexing the embeddings would fail in transformers too.
    if (tokenizer_->vocab_size() > model_.vocab() && !model_.decoder())
      throw ClassifyError("'" + file + "' has " + std::to_string(tokenizer_->vocab_size()) +
                          " tokens but '" + model_.config_file() + "' vocab_size is " +
                          std::to_string(model_.vocab()));
    prepare_ = text_preparation(model_.config().do_lower_case);
    prompt_ = model_.config().prompt(options.prompt);
    if (!prompt_.empty() && !model_.config().include_prompt) {
      // SentenceTransformer._get_prompt_length: the prompt tokenized alone (prepared as a text
      // is), less a special token the post-processor appends (an EOS), so the BOS counts.
      tokenizers::hf::NormalizedText alone(prompt_, 0);
      prepare_->normalize(alone);
      const auto p = tokenizer_->encode(alone.text());
      prompt_tokens_ = p.ids.size();
      if (!p.special_tokens_mask.empty() && p.special_tokens_mask.back() != 0) --prompt_tokens_;
    }
    model_id_ = directory_id(model_, prompt_);
  }

  std::size_t dimension() const override { return model_.dimension(); }
  std::string model_id() const override { return model_id_; }
  std::size_t piece_count() const override { return tokenizer_->vocab_size(); }

  std::vector<std::int32_t> token_ids(const std::string& text) const override {
    tokenizers::hf::require_utf8(text);  // before the normalizers decode it
    // SentenceTransformer.encode prepends the prompt; Transformer.tokenize strips the whole.
    tokenizers::hf::NormalizedText t(prompt_ + text, 0);
    prepare_->normalize(t);
    return tokenizer_->encode(t.text()).ids;
  }

 private:
  std::size_t max_tokens() const override { return max_tokens_; }

  std::vector<float> encode_ids(const std::vector<std::vector<std::int32_t>>& ids,
                                const EncodeProgress& progress) const override {
    return encode_by_length(
        ids, dimension(), options_.batch_size,
        [](std::size_t longest) {
          return std::max<std::size_t>(kMaxBatchRows / architectures::sequence_rows(longest), 1);
        },
        false,
        [this](TokenRows rows) {
          std::vector<architectures::BertInput> inputs;
          inputs.reserve(rows.size());
          for (const auto* r : rows) inputs.push_back({*r, {}});
          return model_.embeddings(inputs, options_.threads, true, prompt_tokens_);
        },
        progress);
  }

  EncoderOptions options_;
  architectures::SentenceTransformerModel model_;
  std::size_t max_tokens_ = 0;
  std::unique_ptr<tokenizers::TextTokenizer> tokenizer_;
  std::unique_ptr<tokenizers::hf::Normalizer> prepare_;
  std::string prompt_;
  std::size_t prompt_tokens_ = 0;  ///< Left out of the pooling (include_prompt false).
  std::string model_id_;
};

}  // namespace

std::shared_ptr<const SentenceEncoder> load_sentence_transformer(const EncoderOptions& options) {
  return std::make_shared<SentenceTransformerEncoder>(options);
}

}  // namespace mcpclass::learned::detail
