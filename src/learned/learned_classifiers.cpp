// The learned classifier kinds (transformer: transformer_classifier.cpp) over the encoder, the kNN
// index and the heads. No libtorch headers here: inference goes through SentenceEncoder and
// plain-data heads.
#include "learned/head_model.hpp"
#include "learned/knn_index.hpp"
#include "learned/knn_vote.hpp"
#include "learned/label_map.hpp"
#include "learned/torch_text_model.hpp"
#include "learned/transformer_classifier.hpp"
#include "mcpclass/classify/batching_classifier.hpp"
#include "mcpclass/classify/errors.hpp"
#include "mcpclass/classify/provenance.hpp"
#include "mcpclass/learned/embedding_encoder.hpp"
#include "mcpclass/learned/learned_classifier.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <mutex>

namespace mcpclass::learned {

using classify::BatchingClassifier;
using classify::CategorySet;
using classify::Classification;
using classify::Classifier;
using classify::ClassifyError;
using classify::ClassifyOptions;
using classify::ConfigError;
using classify::make_classification;
using classify::RoutingPolicy;

namespace {

EncoderOptions encoder_options(const LearnedSettings& s) {
  EncoderOptions o;
  o.encoder_path = resolve_model_path(s.encoder);
  o.tokenizer_path = resolve_model_path(s.tokenizer);
  o.max_tokens = s.max_tokens;
  o.threads = s.threads;
  o.precision = s.precision;
  o.kernels = s.kernels;
  o.layers = s.layers;
  o.dimensions = s.dimensions;
  o.prompt = s.prompt;
  return o;
}

// The provenance id of the tokenizer an encoder reads: `tokenizer`, else the tokenizer.json of a
// sentence-transformers directory; "" when neither is a file.
std::string encoder_tokenizer_id(const LearnedSettings& s) {
  if (!s.tokenizer.empty()) return files_id({resolve_model_path(s.tokenizer)});
  return files_id(
      {(std::filesystem::path(resolve_model_path(s.encoder)) / "tokenizer.json").string()});
}

std::vector<std::size_t> label_indices(const CategorySet& categories,
                                       const std::vector<LabelledExample>& examples) {
  std::vector<std::size_t> out;
  for (const auto& e : examples) {
    const auto c = categories.index_of(e.category);
    if (!c)
      throw ClassifyError("example category '" + e.category + "' is not a configured category");
    out.push_back(*c);
  }
  return out;
}

KnnIndexKey index_key(const CategorySet& categories, const SentenceEncoder& encoder,
                      const LearnedSettings& s) {
  return {encoder.model_id(), file_checksum(resolve_model_path(s.examples)), categories.names()};
}

std::string index_path(const KnnIndexKey& key, const LearnedSettings& s) {
  if (!s.index.empty()) return resolve_model_path(s.index);
  std::string all = key.model_id + key.examples_id;
  for (const auto& c : key.categories) all += "\x1f" + c;
  return learned_cache_dir() + "/indexes/" + text_checksum(all) + ".hnsw";
}

void add_examples(KnnIndex& index, const SentenceEncoder& encoder, const CategorySet& categories,
                  const std::vector<LabelledExample>& examples, const LearnedProgress& progress) {
  const auto labels = label_indices(categories, examples);
  std::vector<std::string> texts;
  for (const auto& e : examples) texts.push_back(e.text);
  const auto vectors = encoder.encode(texts, progress);
  index.add(vectors, labels);
}

// Examples added at run time live in this JSONL beside the index, so a rebuild (new model or
// examples file) replays them instead of losing them.
std::string added_examples_path(const std::string& index_path) {
  return index_path + ".added.jsonl";
}

std::vector<LabelledExample> added_examples(const std::string& index_path) {
  const auto path = added_examples_path(index_path);
  if (!std::filesystem::exists(path)) return {};
  return read_labelled_examples(path);
}

// Loads the persisted index or rebuilds it; returns it with its path.
std::unique_ptr<KnnIndex> open_index(const CategorySet& categories, const SentenceEncoder& encoder,
                                     const LearnedSettings& s, const LearnedProgress& progress,
                                     std::string* path, bool* rebuilt) {
  const auto key = index_key(categories, encoder, s);
  *path = index_path(key, s);
  std::string why;
  if (auto index = KnnIndex::load(*path, encoder.dimension(), key, &why)) {
    if (rebuilt != nullptr) *rebuilt = false;
    return index;
  }
  auto index = std::make_unique<KnnIndex>(encoder.dimension(), key);
  auto examples = read_labelled_examples(resolve_model_path(s.examples));
  for (auto& e : added_examples(*path)) examples.push_back(std::move(e));
  add_examples(*index, encoder, categories, examples, progress);
  index->save(*path);
  if (rebuilt != nullptr) *rebuilt = true;
  return index;
}

class EmbeddingKnnClassifier final : public Classifier {
 public:
  EmbeddingKnnClassifier(CategorySet categories, const LearnedSettings& s, RoutingPolicy policy)
      : categories_(std::move(categories)),
        settings_(s),
        policy_(std::move(policy)),
        encoder_(load_sentence_encoder(encoder_options(s))) {
    index_ = open_index(categories_, *encoder_, settings_, {}, &index_path_, nullptr);
  }

  const CategorySet& categories() const override { return categories_; }
  std::string kind() const override { return "embedding_knn"; }

  Classification classify(std::string_view text, const ClassifyOptions&) const override {
    const std::string t(text);
    const auto vec = encoder_->encode(std::span(&t, 1));
    const auto neighbours = index_->search(vec, settings_.k);
    return make_classification(text, categories_,
                               knn_vote(neighbours, categories_.size(), settings_.temperature),
                               policy_);
  }

  json::object info() const override {
    return {{"kind", kind()},
            {"model", settings_.encoder},
            {"model_id", encoder_->model_id()},
            {"index", index_path_},
            {"index_size", index_->size()},
            {"k", settings_.k},
            {"temperature", settings_.temperature}};
  }

  // The encoder's weights and the examples indexed: the index file's name is their checksum
  // (index_key), the log holds what add() appended. Names, not paths: the same model gets the
  // same id on every machine of a fleet.
  std::string model_id() const override {
    return classify::fnv1a64_id(encoder_->model_id() + '\n' +
                                std::filesystem::path(index_path_).filename().string() + '\n' +
                                files_id({added_examples_path(index_path_)}));
  }
  std::string tokenizer_id() const override { return encoder_tokenizer_id(settings_); }

  // Persists before returning: the examples are appended to the .added.jsonl log (atomically
  // rewritten) and the index is saved (atomically), so they survive a restart or a rebuild.
  void add(const std::vector<LabelledExample>& examples, const LearnedProgress& progress) {
    add_examples(*index_, *encoder_, categories_, examples, progress);
    std::lock_guard lock(persist_mutex_);
    const auto log = added_examples_path(index_path_);
    std::string content;
    if (std::filesystem::exists(log)) {
      std::ifstream in(log, std::ios::binary);
      content.assign(std::istreambuf_iterator<char>(in), {});
    }
    for (const auto& e : examples)
      content +=
          json::serialize(json::object{
              {"text", e.text}, {"category", e.category}, {"id", e.id.empty() ? e.text : e.id}}) +
          "\n";
    write_file_atomically(log, content);
    index_->save(index_path_);
  }

 private:
  CategorySet categories_;
  LearnedSettings settings_;
  RoutingPolicy policy_;
  std::shared_ptr<const SentenceEncoder> encoder_;
  std::unique_ptr<KnnIndex> index_;
  std::string index_path_;
  std::mutex persist_mutex_;  ///< Serialises add()'s log rewrite and index save.
};

using detail::output_to_category;
using detail::reorder;

class TrainedHeadClassifier final : public Classifier {
 public:
  TrainedHeadClassifier(CategorySet categories, const LearnedSettings& s, RoutingPolicy policy)
      : categories_(std::move(categories)),
        settings_(s),
        policy_(std::move(policy)),
        encoder_(load_sentence_encoder(encoder_options(s))),
        head_(detail::load_head(resolve_model_path(s.head))),
        map_(output_to_category(categories_, head_.categories, "head '" + s.head + "'")) {
    if (head_.layers.front().in != encoder_->dimension())
      throw ClassifyError(
          "head '" + s.head + "' expects " + std::to_string(head_.layers.front().in) +
          "-d embeddings; the encoder gives " + std::to_string(encoder_->dimension()));
    if (head_.encoder_id != encoder_->model_id())
      throw ClassifyError("head '" + s.head + "' was trained on another encoder (" +
                          head_.encoder_id + ", now " + encoder_->model_id() +
                          "): run `mcpclass train` again");
  }

  const CategorySet& categories() const override { return categories_; }
  std::string kind() const override { return "trained_head"; }

  Classification classify(std::string_view text, const ClassifyOptions&) const override {
    const auto ids = encoder_->token_ids(std::string(text));
    return from_embedding(text, ids, encoder_->encode_tokens(std::span(&ids, 1)));
  }

  // One forward pass of the encoder for all texts.
  std::vector<Classification> classify_batch(std::span<const std::string_view> texts,
                                             const ClassifyOptions&) const override {
    std::vector<std::vector<std::int32_t>> ids;
    ids.reserve(texts.size());
    for (const auto text : texts) ids.push_back(encoder_->token_ids(std::string(text)));
    const auto vectors = encoder_->encode_tokens(ids);
    const std::size_t d = encoder_->dimension();
    std::vector<Classification> out;
    out.reserve(texts.size());
    for (std::size_t i = 0; i < texts.size(); ++i)
      out.push_back(from_embedding(texts[i], ids[i], std::span(vectors.data() + i * d, d)));
    return out;
  }

  json::object info() const override {
    return {{"kind", kind()},
            {"model", settings_.head},
            {"encoder", settings_.encoder},
            {"model_id", encoder_->model_id()},
            {"index_size", 0},
            {"temperature", head_.temperature},
            {"lexical_mix", head_.lexical.mix},
            {"scope", head_.scope.empty() ? json::value() : json::value(head_.scope.method)}};
  }

  std::string model_id() const override {
    return classify::fnv1a64_id(encoder_->model_id() + '\n' +
                                files_id({resolve_model_path(settings_.head)}));
  }
  std::string tokenizer_id() const override { return encoder_tokenizer_id(settings_); }

 private:
  // The head on one text's embedding and token ids.
  Classification from_embedding(std::string_view text, std::span<const std::int32_t> ids,
                                std::span<const float> embedding) const {
    auto p = head_.probabilities(embedding, ids, settings_.temperature);
    const auto in_scope =
        head_.scope.empty() ? std::nullopt
                            : std::optional(head_.scope.in_scope(head_.scope.score(embedding, p)));
    return make_classification(text, categories_, reorder(std::move(p), map_), policy_, in_scope);
  }

  CategorySet categories_;
  LearnedSettings settings_;
  RoutingPolicy policy_;
  std::shared_ptr<const SentenceEncoder> encoder_;
  detail::HeadModel head_;
  std::vector<std::size_t> map_;
};

std::vector<std::string> read_labels(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ClassifyError("cannot open label file '" + path + "'");
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    if (!line.empty()) out.push_back(line);
  }
  return out;
}

class TorchScriptClassifier final : public Classifier {
 public:
  TorchScriptClassifier(CategorySet categories, const LearnedSettings& s, RoutingPolicy policy)
      : categories_(std::move(categories)), settings_(s), policy_(std::move(policy)) {
    auto options = encoder_options(s);
    options.encoder_path = resolve_model_path(s.model);
    model_ = detail::load_text_model(options, false, "sequence classifier");
    const auto labels =
        s.labels.empty() ? categories_.names() : read_labels(resolve_model_path(s.labels));
    map_ = output_to_category(categories_, labels, "sequence classifier '" + s.model + "'");
    if (model_->dimension() != labels.size())
      throw ClassifyError("sequence classifier '" + s.model + "' returns " +
                          std::to_string(model_->dimension()) + " logits for " +
                          std::to_string(labels.size()) + " labels");
  }

  const CategorySet& categories() const override { return categories_; }
  std::string kind() const override { return "torchscript"; }

  Classification classify(std::string_view text, const ClassifyOptions&) const override {
    const std::string t(text);
    const auto logits = model_->encode(std::span(&t, 1));
    return make_classification(text, categories_, detail::scores_from_logits(logits, map_),
                               policy_);
  }

  json::object info() const override {
    return {{"kind", kind()},
            {"model", settings_.model},
            {"model_id", model_->model_id()},
            {"index_size", 0}};
  }

  // The encoder's model_id() already covers the TorchScript file and its tokenizer.
  std::string model_id() const override { return classify::fnv1a64_id(model_->model_id()); }
  std::string tokenizer_id() const override { return encoder_tokenizer_id(settings_); }

 private:
  CategorySet categories_;
  LearnedSettings settings_;
  RoutingPolicy policy_;
  std::shared_ptr<const SentenceEncoder> model_;
  std::vector<std::size_t> map_;
};

// `classifier` behind a BatchingClassifier when settings.batching asks for one.
std::unique_ptr<Classifier> with_batching(std::unique_ptr<Classifier> classifier,
                                          const LearnedSettings& settings) {
  if (settings.batching.max_batch < 2) return classifier;
  return std::make_unique<BatchingClassifier>(std::move(classifier), settings.batching_at_load());
}

}  // namespace

bool learned_available() noexcept {
  return true;
}

std::unique_ptr<Classifier> make_learned_classifier(std::string_view kind,
                                                    const CategorySet& categories,
                                                    const LearnedSettings& settings,
                                                    const RoutingPolicy& policy,
                                                    const LearnedProgress& load_progress) {
  if (kind == "embedding_knn")
    return std::make_unique<EmbeddingKnnClassifier>(categories, settings, policy);
  if (kind == "trained_head")
    return with_batching(std::make_unique<TrainedHeadClassifier>(categories, settings, policy),
                         settings);
  if (kind == "torchscript")
    return std::make_unique<TorchScriptClassifier>(categories, settings, policy);
  if (kind == "transformer")
    return with_batching(
        detail::make_transformer_classifier(categories, settings, policy, load_progress), settings);
  throw ConfigError("classifier.kind",
                    "unknown learned classifier kind '" + std::string(kind) + "'");
}

std::string build_knn_index(const CategorySet& categories, const LearnedSettings& settings,
                            const LearnedProgress& progress, bool* rebuilt) {
  const auto encoder = load_sentence_encoder(encoder_options(settings));
  std::string path;
  open_index(categories, *encoder, settings, progress, &path, rebuilt);
  return path;
}

void add_knn_examples(Classifier& classifier, const std::vector<LabelledExample>& examples,
                      const LearnedProgress& progress) {
  auto* knn = dynamic_cast<EmbeddingKnnClassifier*>(&classifier);
  if (knn == nullptr) throw ClassifyError("add_knn_examples needs an embedding_knn classifier");
  knn->add(examples, progress);
}

}  // namespace mcpclass::learned
