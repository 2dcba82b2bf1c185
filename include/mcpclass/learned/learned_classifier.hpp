// The learned classifiers: `embedding_knn` (encoder → kNN vote over labelled examples),
// `trained_head` (encoder → softmax head trained by `mcpclass train`) and `torchscript` (a
// sequence classifier exported elsewhere). Built from the configuration document by
// config::make_classifier; this header is the direct C++ entry point.
#pragma once

#include "mcpclass/classify/category.hpp"
#include "mcpclass/classify/classifier.hpp"
#include "mcpclass/classify/routing_policy.hpp"
#include "mcpclass/learned/learned_examples.hpp"
#include "mcpclass/learned/learned_settings.hpp"

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mcpclass::learned {

/// True when the library was built with the learned component (MCPCLASS_WITH_LEARNED).
bool learned_available() noexcept;

/// Progress of long operations: (done, total).
using LearnedProgress = std::function<void(std::size_t, std::size_t)>;

/// Builds the classifier for a learned `kind`. Throws ConfigError (unknown kind, or the
/// component is not built) or ClassifyError (missing/corrupt model, example or index files).
/// embedding_knn loads its persisted index, rebuilding it when missing or stale. Every returned
/// classifier is immutable apart from EmbeddingKnn hot additions, and thread-safe.
/// `load_progress`: bytes of checkpoint tensors read and converted so far, of all (kind
/// transformer; the others load in a moment).
std::unique_ptr<classify::Classifier> make_learned_classifier(
    std::string_view kind, const classify::CategorySet& categories, const LearnedSettings& settings,
    const classify::RoutingPolicy& policy, const LearnedProgress& load_progress = {});

/// What `mcpclass model inspect` loads besides the directory.
struct InspectOptions {
  /// A LoRA adapter directory merged as `adapter:` would (kind transformer checkpoints).
  std::string adapter;
  /// Several adapters over the one base, as `adapters: {task: DIR}` would load them: task names
  /// and adapter directories, in order (excludes `adapter`).
  std::vector<std::pair<std::string, std::string>> tasks;
  /// 2D Matryoshka of a sentence-transformers directory, as an encoder's `layers` and
  /// `dimensions` settings (0 = all).
  std::size_t layers = 0;
  std::size_t dimensions = 0;
  /// A sentence-transformers directory's prompt, as an encoder's `prompt` setting.
  std::string prompt;
};

/// What `kind: transformer` would run for the checkpoint directory `dir` (`mcpclass model
/// inspect`), or an encoder for a sentence-transformers directory: architecture, sizes,
/// parameters, labels, the tokenizer's model type and the arithmetic. Loads and checks
/// everything a classifier would, so it fails as make_learned_classifier would (ClassifyError
/// naming the file, tensor or key; also for options that do not apply to the directory).
/// Thread-safety: reads files only; may be called from any thread.
/// `progress` as make_learned_classifier's.
json::object inspect_checkpoint(const std::string& dir, const InspectOptions& options = {},
                                const LearnedProgress& progress = {});

/// Builds (or reuses, when fresh) the embedding_knn index for `settings` and returns its path.
/// `rebuilt` tells whether it had to be built. Throws like make_learned_classifier.
std::string build_knn_index(const classify::CategorySet& categories,
                            const LearnedSettings& settings, const LearnedProgress& progress = {},
                            bool* rebuilt = nullptr);

/// Adds examples to a live embedding_knn classifier (hot) and persists them before returning:
/// appended to `<index>.added.jsonl` (replayed whenever the index is rebuilt, e.g. for a new
/// model or examples file) and the index saved; both writes are atomic. Each call rewrites the
/// index, so add many examples in one call. Throws ClassifyError when `classifier` is not an
/// embedding_knn classifier, a category is unknown, or a file cannot be written.
void add_knn_examples(classify::Classifier& classifier,
                      const std::vector<LabelledExample>& examples,
                      const LearnedProgress& progress = {});

struct HeadTrainingProgress {
  std::size_t epoch = 0;   ///< Epochs done, over every part trained.
  std::size_t epochs = 0;  ///< Epochs in all.
  double loss = 0.0;       ///< Mean training loss of the epoch just done.
};

struct HeadTrainingOptions {
  std::size_t epochs = 60;
  double learning_rate = 3e-3;
  double weight_decay = 1e-4;
  std::size_t hidden = 0;            ///< 0 = linear softmax head; else one ReLU hidden layer.
  unsigned validation_percent = 10;  ///< Of the training rows, for calibration (temperature).
  std::uint64_t seed = 7;
  double label_smoothing = 0.0;  ///< Cross-entropy label smoothing of the dense head, in [0, 1).
  /// Dense members trained from different initialisations and averaged (mean logits), saved as
  /// one network with `ensemble × hidden` hidden units: steadier than one member.
  std::size_t ensemble = 1;
  /// Also train on short crops of each training text (its last sentence and a random 4–12 word
  /// window, same label), so the head sees query-length texts; validation rows are not cropped.
  bool augment_crops = false;
  /// λ of the lexical part: p = (1 − λ)·p_dense + λ·p_lex, where p_lex is a linear softmax over
  /// the tf-idf bag of token ids (formula in the head manifest docs). 0 = dense head only.
  double lexical_mix = 0.0;
  std::size_t lexical_epochs = 20;
  double lexical_learning_rate = 1e-2;
  /// The out-of-scope score's prototypes (the head's `in_scope`, calibrated on the validation
  /// rows): "rows" = up to scope_rows training rows (rows labelled `oos` excluded), compared by
  /// the mean cosine similarity of the scope_k most similar; "centroids" = one unit mean per
  /// category (k = 1); "none" = no score.
  std::string scope = "rows";
  std::size_t scope_rows = 0;  ///< 0 = every row; else an even stride over them.
  /// Rows that are the prototypes instead of the training rows (those in the validation part and
  /// those labelled `oos` left out): a fuller sample of the domain than a capped training mix,
  /// e.g. every train row of its sources. Empty = the training rows.
  std::vector<LabelledExample> scope_examples;
  /// Inverted-file lists the prototypes are grouped in (0 = about √rows when there are more
  /// than 8,192, else none; 1 = none: every prototype compared), and how many of the most
  /// similar lists a text is compared in.
  std::size_t scope_lists = 0;
  std::size_t scope_probes = 16;
  std::size_t scope_k = 5;
  /// Similarities are taken in the prototypes' top principal directions (0 = all of the
  /// encoder's): fewer values read per text.
  std::size_t scope_dimensions = 128;
  /// Weight of the nearest prototypes' own density, subtracted from their similarity (rows only;
  /// 0 = none).
  double scope_density = 0.5;
  /// The catch-all category ("other"): its probability × scope_catchall_weight is subtracted
  /// from the score. Empty = no such term.
  std::string scope_catchall;
  double scope_catchall_weight = 0.1;
  /// Weight of the fine-label term (head_model.hpp): a linear softmax over the prototype rows'
  /// own labels (JSONL `label`, else the category; per source), its log-partition added to the
  /// score in units of its spread over the validation rows. 0 = no such term.
  double scope_label_weight = 0.0;
  /// Called after every training epoch (the dense members' in turn, then the lexical part's):
  /// epochs done and in all, and the epoch's mean training loss. Empty = silent.
  std::function<void(const HeadTrainingProgress&)> on_epoch;
};

struct HeadTrainingReport {
  std::size_t train_rows = 0;
  std::size_t validation_rows = 0;
  double validation_accuracy = 0.0;
  double validation_ece = 0.0;       ///< Expected calibration error (15 bins) after calibration.
  double temperature = 1.0;          ///< Calibrated logit temperature of the dense part.
  double lexical_temperature = 0.0;  ///< Of the lexical part (0 = none).
  std::size_t augmented_rows = 0;    ///< Crops added by augment_crops.
  double seconds = 0.0;
};

/// Fits a softmax head on frozen encoder embeddings of `examples` (all of them: pass the train
/// split), calibrates a temperature on a hashed validation part, and writes `head_path` (a
/// TorchScript module) plus `head_path + ".json"` (categories, encoder checksum, temperature,
/// report). Embeddings are cached under learned_cache_dir(). Throws ClassifyError.
HeadTrainingReport train_head(const classify::CategorySet& categories,
                              const LearnedSettings& settings,
                              const std::vector<LabelledExample>& examples,
                              const std::string& head_path, const HeadTrainingOptions& options,
                              const LearnedProgress& progress = {});

/// Writes encoder + head as one TorchScript sequence classifier `forward(ids, mask) -> logits`
/// (usable with kind torchscript) and its label file `path + ".labels"`. Throws ClassifyError.
void export_sequence_classifier(const LearnedSettings& settings, const std::string& path);

}  // namespace mcpclass::learned
