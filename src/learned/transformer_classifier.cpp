#include "learned/transformer_classifier.hpp"

#include "learned/compute_choice.hpp"

#include "architectures/common/sequence_model.hpp"
#include "architectures/common/token_model.hpp"
#include "architectures/sentence_transformers/sentence_transformer_config.hpp"
#include "architectures/sentence_transformers/sentence_transformer_model.hpp"
#include "checkpoint/checkpoint_config.hpp"
#include "learned/label_map.hpp"
#include "mcpclass/classify/errors.hpp"
#include "mcpclass/learned/learned_classifier.hpp"
#include "mcpclass/tokenizers/text_tokenizer.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <optional>

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
  TransformerClassifier(CategorySet categories, const LearnedSettings& s, RoutingPolicy policy,
                        const LearnedProgress& load_progress)
      : TransformerClassifier(std::move(categories), s, std::move(policy),
                              choose_compute(s.precision, s.kernels, "model '" + s.model + "'"),
                              load_progress) {}

  // One task of a base shared by several adapters (`adapters`): `model` is the task's.
  TransformerClassifier(CategorySet categories, const LearnedSettings& s, RoutingPolicy policy,
                        const kernels::Compute& compute,
                        std::shared_ptr<const architectures::SequenceModel> model, std::string task)
      : categories_(std::move(categories)),
        settings_(s),
        policy_(std::move(policy)),
        dir_(resolve_model_path(s.model)),
        compute_(compute),
        model_(std::move(model)),
        task_(std::move(task)) {
    const auto& m = *model_;
    map_ = output_to_category(categories_, m.labels(),
                              "model '" + s.model + "'" + (task_.empty() ? "" : " task " + task_));
    const auto tokenizer = (std::filesystem::path(dir_) / "tokenizer.json").string();
    tokenizers::TokenizerOptions options;
    options.max_length = std::min(s.max_tokens, m.max_tokens());
    tokenizer_ = tokenizers::open_text_tokenizer(tokenizer, options);
    if (tokenizer_->vocab_size() > m.vocab())
      throw ClassifyError("'" + tokenizer + "' has " + std::to_string(tokenizer_->vocab_size()) +
                          " tokens but '" + m.config_file() + "' vocab_size is " +
                          std::to_string(m.vocab()));
    if (m.labels().size() == 1)
      activation_ =
          checkpoint::score_activation(checkpoint::read_checkpoint_config(dir_), m.config_file());
  }

  /// The classifiers of the other tasks, which share this one's base.
  void set_tasks(std::vector<std::pair<std::string, std::shared_ptr<const Classifier>>> tasks) {
    tasks_ = std::move(tasks);
  }
  std::vector<std::pair<std::string, std::shared_ptr<const Classifier>>> tasks() const override {
    return tasks_;
  }

  const CategorySet& categories() const override { return categories_; }
  std::string kind() const override { return "transformer"; }

  Classification classify(std::string_view text, const ClassifyOptions& options) const override {
    return classify_batch(std::span(&text, 1), options).front();
  }

  std::vector<Classification> classify_batch(std::span<const std::string_view> texts,
                                             const ClassifyOptions&) const override {
    refuse_if_reranker();
    std::vector<tokenizers::TokenizedText> tokens;
    tokens.reserve(texts.size());
    for (const auto text : texts) tokens.push_back(tokenizer_->encode(text));
    return run(tokens, texts);
  }

  bool takes_pairs() const override { return true; }

  // NLI, fact-check and cross-encoder checkpoints are sequence classifiers over the tokenizer's
  // pair template: [CLS] premise [SEP] hypothesis [SEP] and its token types.
  std::vector<Classification> classify_pairs(std::span<const classify::TextPair> pairs,
                                             const ClassifyOptions&) const override {
    refuse_if_reranker();
    std::vector<tokenizers::TokenizedText> tokens;
    std::vector<std::string_view> texts;
    tokens.reserve(pairs.size());
    for (const auto& p : pairs) {
      tokens.push_back(tokenizer_->encode_pair(p.text, p.text_pair));
      texts.push_back(p.text);
    }
    return run(tokens, texts);
  }

  bool reranks() const override { return activation_.has_value(); }

  // A cross-encoder reranker (ms-marco MiniLM, bge-reranker, gte-reranker-modernbert) is a
  // 1-label sequence classifier over (query, passage) pairs: its logit is the relevance.
  std::vector<classify::RerankScore> rerank(std::string_view query,
                                            std::span<const std::string_view> passages,
                                            const ClassifyOptions& options) const override {
    if (!activation_) return Classifier::rerank(query, passages, options);
    std::vector<tokenizers::TokenizedText> tokens;
    tokens.reserve(passages.size());
    for (const auto passage : passages) tokens.push_back(tokenizer_->encode_pair(query, passage));
    std::vector<classify::RerankScore> out;
    out.reserve(passages.size());
    forward(tokens, [&](std::size_t, std::span<const float> logit) {
      out.push_back({activate(logit.front()), logit.front()});
    });
    return out;
  }

 private:
  TransformerClassifier(CategorySet categories, const LearnedSettings& s, RoutingPolicy policy,
                        const kernels::Compute& compute, const LearnedProgress& load_progress)
      : TransformerClassifier(std::move(categories), s, std::move(policy), compute,
                              architectures::open_sequence_model(
                                  resolve_model_path(s.model),
                                  s.adapter.empty() ? std::string() : resolve_model_path(s.adapter),
                                  load_progress, compute),
                              std::string()) {}

  void refuse_if_reranker() const {
    if (activation_)
      throw ClassifyError("model '" + settings_.model +
                          "' is a reranker (1 label: a relevance score, no categories to choose "
                          "from): it scores passages for a query with rerank, not classify_text");
  }

  double activate(float logit) const {
    switch (*activation_) {
      case checkpoint::ScoreActivation::sigmoid:
        return 1.0 / (1.0 + std::exp(-static_cast<double>(logit)));
      case checkpoint::ScoreActivation::tanh:
        return std::tanh(static_cast<double>(logit));
      case checkpoint::ScoreActivation::identity:
        break;
    }
    return logit;
  }

  // The texts' forward passes, in batches of bounded activations: `row(i, logits)` for each
  // text in order.
  template <typename Row>
  void forward(const std::vector<tokenizers::TokenizedText>& tokens, Row&& row) const {
    const std::size_t labels = model_->labels().size();
    for (std::size_t begin = 0; begin < tokens.size();) {
      std::vector<architectures::BertInput> inputs;
      std::size_t count = 0;
      for (std::size_t i = begin; i < tokens.size(); ++i) {
        const auto rows = architectures::sequence_rows(tokens[i].ids.size());
        if (!inputs.empty() && count + rows > kMaxBatchRows) break;
        count += rows;
        inputs.push_back({tokens[i].ids, tokens[i].type_ids});
      }
      const auto logits = model_->logits(inputs, settings_.threads);
      for (std::size_t b = 0; b < inputs.size(); ++b)
        row(begin + b, std::span<const float>(logits.data() + b * labels, labels));
      begin += inputs.size();
    }
  }

  std::vector<Classification> run(const std::vector<tokenizers::TokenizedText>& tokens,
                                  std::span<const std::string_view> texts) const {
    std::vector<Classification> out;
    out.reserve(texts.size());
    forward(tokens, [&](std::size_t i, std::span<const float> row) {
      out.push_back(
          make_classification(texts[i], categories_, scores_from_logits(row, map_), policy_));
    });
    return out;
  }

 public:
  json::object info() const override {
    json::object o{{"kind", kind()},
                   {"model", settings_.model},
                   {"architecture", model_->architecture()},
                   {"index_size", 0}};
    if (!settings_.adapter.empty()) o["adapter"] = settings_.adapter;
    if (!task_.empty()) {
      o["task"] = task_;
      o["merge_adapters"] = settings_.merge_adapters;
      json::array others;
      for (const auto& [name, c] : tasks_) others.emplace_back(name);
      if (!others.empty()) o["other_tasks"] = std::move(others);
    }
    if (activation_) o["reranker"] = json::object{{"activation", to_string(*activation_)}};
    for (auto& [key, value] : describe_compute(compute_)) o[key] = value;
    return o;
  }

  // The bytes the logits come from: config.json, every safetensors file of the checkpoint (one
  // file or the shards), and the adapter's config and weights.
  std::string model_id() const override {
    namespace fs = std::filesystem;
    std::vector<std::string> files{(fs::path(dir_) / "config.json").string()};
    std::vector<std::string> weights;
    for (const auto& entry : fs::directory_iterator(dir_))
      if (entry.path().extension() == ".safetensors") weights.push_back(entry.path().string());
    std::sort(weights.begin(), weights.end());
    files.insert(files.end(), weights.begin(), weights.end());
    for (const auto& [name, dir] : settings_.adapters)
      if (name == task_) {
        const fs::path adapter(resolve_model_path(dir));
        files.push_back((adapter / "adapter_config.json").string());
        files.push_back((adapter / "adapter_model.safetensors").string());
      }
    if (!settings_.adapter.empty()) {
      const fs::path adapter(resolve_model_path(settings_.adapter));
      files.push_back((adapter / "adapter_config.json").string());
      files.push_back((adapter / "adapter_model.safetensors").string());
    }
    return files_id(files);
  }
  std::string tokenizer_id() const override {
    return files_id({(std::filesystem::path(dir_) / "tokenizer.json").string()});
  }

 private:
  CategorySet categories_;
  LearnedSettings settings_;
  RoutingPolicy policy_;
  std::string dir_;
  kernels::Compute compute_;
  std::shared_ptr<const architectures::SequenceModel> model_;
  std::string task_;  // with `adapters`: the task this classifier serves
  std::vector<std::pair<std::string, std::shared_ptr<const Classifier>>> tasks_;
  std::unique_ptr<tokenizers::TextTokenizer> tokenizer_;
  std::vector<std::size_t> map_;
  std::optional<checkpoint::ScoreActivation> activation_;  // set: a reranker (1 label)
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

// tokenizer.json of `dir`: its file, model type and vocabulary, for inspection.
json::object describe_tokenizer(const std::string& dir) {
  const auto path = (std::filesystem::path(dir) / "tokenizer.json").string();
  const auto tokenizer = tokenizers::open_text_tokenizer(path);
  return {{"file", path},
          {"model", tokenizer_model_type(path)},
          {"vocab_size", tokenizer->vocab_size()}};
}

// `mcpclass model inspect` of a sentence-transformers directory: no labels, its pooling.
json::object inspect_sentence_transformer(const std::string& dir, const InspectOptions& options,
                                          const checkpoint::CheckpointProgress& progress) {
  const architectures::SentenceTransformerModel model(
      dir, progress, kernels::default_compute(),
      {.layers = options.layers, .dimensions = options.dimensions});
  json::object out{{"architecture", model.architecture()},
                   {"sentence_transformers", model.config().modules_file}};
  for (auto& [key, value] : model.describe()) out[key] = value;
  // The text an encoder of `prompt:` would prepend (checked: an unknown name is refused).
  out["prompt"] = model.config().prompt(options.prompt);
  out["tokenizer"] = describe_tokenizer(model.config().transformer_dir);
  return out;
}

}  // namespace

std::unique_ptr<Classifier> make_transformer_classifier(const CategorySet& categories,
                                                        const LearnedSettings& settings,
                                                        const RoutingPolicy& policy,
                                                        const LearnedProgress& load_progress) {
  if (settings.adapters.empty())
    return std::make_unique<TransformerClassifier>(categories, settings, policy, load_progress);
  // One base, several adapters: every task's model shares the base's encoder.
  const auto compute =
      choose_compute(settings.precision, settings.kernels, "model '" + settings.model + "'");
  std::vector<architectures::TaskAdapter> tasks;
  for (const auto& [name, dir] : settings.adapters)
    tasks.push_back({name, resolve_model_path(dir)});
  std::vector<std::unique_ptr<architectures::SequenceModel>> models;
  if (settings.merge_adapters) {
    // A merged copy of the base a task: N bases in memory, no updates added per product.
    for (const auto& t : tasks)
      models.push_back(architectures::open_sequence_model(resolve_model_path(settings.model),
                                                          t.adapter_dir, load_progress, compute));
  } else {
    models = architectures::open_task_models(resolve_model_path(settings.model), tasks,
                                             load_progress, compute);
  }
  std::unique_ptr<TransformerClassifier> served;
  std::vector<std::pair<std::string, std::shared_ptr<const Classifier>>> others;
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    const auto& name = tasks[i].name;
    std::shared_ptr<const architectures::SequenceModel> model = std::move(models[i]);
    if (name == settings.task) {
      served = std::make_unique<TransformerClassifier>(categories, settings, policy, compute, model,
                                                       name);
      continue;
    }
    std::vector<classify::Category> labels;
    for (const auto& l : model->labels()) labels.push_back({l, l, {}, {}, {}});
    others.emplace_back(
        name, std::make_shared<TransformerClassifier>(CategorySet(std::move(labels)), settings,
                                                      policy, compute, model, name));
  }
  served->set_tasks(std::move(others));
  return served;
}

}  // namespace mcpclass::learned::detail

namespace mcpclass::learned {

namespace detail {

// `model inspect --task NAME=DIR ...`: one base loaded once for several adapters, as `adapters:`
// loads it (open_task_models), each task's labels and LoRA updates, and the parameters held
// against one merged copy of the base per task.
json::object inspect_tasks(const std::string& dir, const std::string& architecture,
                           const InspectOptions& options, const LearnedProgress& progress) {
  if (!options.adapter.empty())
    throw ClassifyError(
        "--task and --adapter exclude each other: --adapter merges one adapter "
        "into its own copy of the base, --task keeps one base for several");
  if (architecture.ends_with("ForTokenClassification"))
    throw ClassifyError("'" + dir + "' is a token classifier (" + architecture +
                        "): several adapters over one base (--task) apply to sequence "
                        "classifiers");
  std::vector<architectures::TaskAdapter> tasks;
  for (const auto& [name, adapter] : options.tasks) {
    if (auto problem = task_name_problem(name))
      throw ClassifyError("--task " + name + ": " + *problem);
    if (std::any_of(tasks.begin(), tasks.end(), [&](const auto& t) { return t.name == name; }))
      throw ClassifyError("--task " + name + " is given twice");
    tasks.push_back({name, adapter});
  }
  const auto models = architectures::open_task_models(dir, tasks, progress);
  json::object out{{"architecture", architecture}};
  for (auto& [key, value] : models.front()->describe()) out[key] = value;
  std::size_t shared = 0, held = 0, merged = 0;
  json::array described;
  for (std::size_t i = 0; i < models.size(); ++i) {
    const auto own = models[i]->describe();
    const auto parameters = static_cast<std::size_t>(own.at("parameters").to_number<double>());
    const auto lora = static_cast<std::size_t>(own.at("lora_parameters").to_number<double>());
    shared = static_cast<std::size_t>(own.at("shared_parameters").to_number<double>());
    held += parameters - shared;  // its head and its updates
    merged += parameters - lora;  // a copy of the base with the updates merged in
    json::array labels;
    for (const auto& l : models[i]->labels()) labels.emplace_back(l);
    described.emplace_back(json::object{{"task", tasks[i].name},
                                        {"adapter", tasks[i].adapter_dir},
                                        {"labels", std::move(labels)},
                                        {"lora_parameters", lora},
                                        {"parameters", parameters - shared}});
  }
  out.erase("lora_parameters");
  out["parameters"] = shared + held;
  out["tasks"] = std::move(described);
  // What `adapters:` holds against one merged model per task (`adapter:` N times).
  out["memory"] = json::object{
      {"shared_parameters", shared},
      {"parameters_held", shared + held},
      {"merged_copies_parameters", merged},
      {"saved", merged > shared + held
                    ? static_cast<double>(merged - shared - held) / static_cast<double>(merged)
                    : 0.0}};
  for (auto& [key, value] : describe_compute(kernels::default_compute())) out[key] = value;
  out["kernel_sets"] = runnable_kernel_sets();
  out["tokenizer"] = describe_tokenizer(dir);
  return out;
}

}  // namespace detail

json::object inspect_checkpoint(const std::string& dir, const InspectOptions& options,
                                const LearnedProgress& progress) {
  const auto& adapter_dir = options.adapter;
  if (architectures::is_sentence_transformer_dir(dir)) {
    if (!adapter_dir.empty() || !options.tasks.empty())
      throw ClassifyError("'" + dir + "' is a sentence-transformers encoder; --adapter and " +
                          "--task apply to a kind transformer checkpoint");
    return detail::inspect_sentence_transformer(dir, options, progress);
  }
  if (options.layers != 0 || options.dimensions != 0 || !options.prompt.empty())
    throw ClassifyError("'" + dir + "' is not a sentence-transformers directory (modules.json): " +
                        "--layers, --dimensions and --prompt apply to sentence encoders");
  const auto file = (std::filesystem::path(dir) / "config.json").string();
  const auto architecture =
      checkpoint::config_architecture(checkpoint::read_checkpoint_config(dir), file);
  if (!options.tasks.empty()) return detail::inspect_tasks(dir, architecture, options, progress);
  json::object out{{"architecture", architecture}};
  // A token head is named so in every architecture; any other is a sequence head (or refused).
  std::unique_ptr<architectures::CheckpointModel> model;
  if (architecture.ends_with("ForTokenClassification"))
    model = architectures::open_token_model(dir, adapter_dir, progress);
  else
    model = architectures::open_sequence_model(dir, adapter_dir, progress);
  const auto& label_names = model->labels();
  for (auto& [key, value] : model->describe()) out[key] = value;
  // What a classifier of it would compute with by default, and the kernel sets this CPU runs
  // (a model's `kernels` setting or MCPCLASS_KERNELS may pick a lower one).
  for (auto& [key, value] : detail::describe_compute(kernels::default_compute())) out[key] = value;
  out["kernel_sets"] = detail::runnable_kernel_sets();
  if (!adapter_dir.empty()) out["adapter"] = adapter_dir;
  json::array labels;
  for (const auto& l : label_names) labels.emplace_back(l);
  out["labels"] = std::move(labels);
  if (label_names.size() == 1)
    out["reranker"] = json::object{
        {"activation",
         to_string(checkpoint::score_activation(checkpoint::read_checkpoint_config(dir), file))}};
  out["tokenizer"] = detail::describe_tokenizer(dir);
  return out;
}

}  // namespace mcpclass::learned
