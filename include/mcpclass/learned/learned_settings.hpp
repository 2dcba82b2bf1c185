// Settings of the learned classifier kinds (`classifier.kind` embedding_knn, trained_head,
// torchscript, transformer) and where their model files live. Plain values and pure functions:
// thread-safe. Parsing is always available, so a configuration is validated the same way whether or
// not the library was built with the learned component (MCPCLASS_WITH_LEARNED).
#pragma once

#include "mcpclass/classify/batching_classifier.hpp"
#include "mcpclass/classify/category.hpp"
#include "mcpclass/learned/embedding_encoder.hpp"

#include <boost/json.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mcpclass::learned {

namespace json = boost::json;

/// Why `name` cannot name a task of `adapters:` (its tool is classify_<name>, its HTTP path
/// /classify/<name>), or nullopt when it can.
std::optional<std::string> task_name_problem(std::string_view name);

/// Model paths may start with `cache:`, meaning "relative to learned_cache_dir()"; other relative
/// paths are relative to the working directory.
struct LearnedSettings {
  /// Sentence encoder: USE-lite weights as safetensors or a sentence-transformers model
  /// directory (modules.json; both run natively, no libtorch), or any TorchScript module
  /// `forward(ids: int64[B,T], mask: int64[B,T]) -> float[B,D]`.
  std::string encoder = "cache:use-lite/use-lite.safetensors";
  /// sentencepiece `.model` whose ids the encoder expects (not read for a sentence-transformers
  /// directory, which brings its tokenizer.json).
  std::string tokenizer = "cache:use-lite/tokenizer.model";
  /// embedding_knn: labelled examples (CSV with `category` and `text` columns, or JSONL with
  /// `text` and `category`). Required for embedding_knn.
  std::string examples;
  /// embedding_knn: the persisted index; empty = `cache:indexes/<key>.hnsw`, keyed by the model
  /// and example checksums.
  std::string index;
  /// embedding_knn: neighbours that vote.
  std::size_t k = 10;
  /// embedding_knn: vote temperature T (see knn_vote.hpp); trained_head: logit temperature
  /// override (0 = use the calibrated one stored with the head).
  double temperature = 0.05;
  /// trained_head: head file written by `mcpclass train`. Required for trained_head.
  std::string head;
  /// torchscript: sequence classifier `forward(ids, mask) -> logits[B,L]`. Required.
  /// transformer: a Hugging Face checkpoint directory (config.json, model.safetensors or
  /// model.safetensors.index.json, tokenizer.json). Required.
  std::string model;
  /// transformer: a PEFT LoRA adapter directory (adapter_config.json,
  /// adapter_model.safetensors) merged into `model`'s weights at load; empty = none. It may be
  /// `model` itself when the adapter is published beside its base.
  std::string adapter;
  /// transformer: several PEFT LoRA adapters over `model`, by task name (in the order written):
  /// the base held once, each adapter kept apart (architectures' open_task_models); the
  /// classifier serves `task`, and each other task is a classifier of its own (Classifier::
  /// tasks(), the MCP tool classify_<name>). Excludes `adapter`.
  std::vector<std::pair<std::string, std::string>> adapters;
  /// transformer with `adapters`: the task the classifier serves (default: the first).
  std::string task;
  /// transformer with `adapters`: each adapter merged into a copy of the base of its own (one
  /// base per task in memory, the speed of one merged model) instead of one base shared by all
  /// (bench/adapters_memory.py at BERT-base size: a shared task 8-19% slower at batch 1, for a
  /// third of the memory of four merged copies).
  bool merge_adapters = false;
  /// torchscript: label per logit, one per line; empty = the categories in class order.
  std::string labels;
  /// Tokens per text after tokenisation (longer texts are truncated).
  std::size_t max_tokens = 128;
  /// Intra-op threads per inference call (1 is fastest for single queries on small machines).
  std::size_t threads = 1;
  /// Native model arithmetic (encoders and kind transformer): `auto`, `f32`, `bf16` or `int8`
  /// (EncoderPrecision).
  EncoderPrecision precision = EncoderPrecision::automatic;
  /// Native models: the highest kernel set to use ("portable", "avx2"; empty = the best the CPU
  /// runs). Checked at load: an unknown set, or one this CPU lacks, is refused by name.
  std::string kernels;
  /// embedding_knn, trained_head with a sentence-transformers encoder: 2D Matryoshka — encoder
  /// layers computed and embedding values kept (0 = all; EncoderOptions).
  std::size_t layers = 0;
  std::size_t dimensions = 0;
  /// embedding_knn, trained_head with a sentence-transformers encoder: the prompt's name
  /// (EncoderOptions::prompt; empty = the model's default_prompt_name).
  std::string prompt;
  /// trained_head, transformer: `batching {max_batch, max_wait_us, max_running}` gathers
  /// concurrent calls into one forward pass (batching_classifier.hpp); max_batch 1 = off;
  /// max_running 0 = cores ÷ threads. trained_head: off unless set; transformer: on by default
  /// (max_batch 8, max_wait_us 0: a lone call never waits).
  classify::BatchingOptions batching;

  /// `batching` as it runs: max_running 0 made the cores' share per batch (hardware threads ÷
  /// `threads`, at least 1).
  classify::BatchingOptions batching_at_load() const;
  /// The callers a batching classifier keeps busy: one per text of each batch that runs and of
  /// the one that gathers meanwhile (0 without batching). A host running classify() on a pool
  /// of workers needs that many, or batches never fill.
  std::size_t batching_callers() const;

  /// Strict: unknown keys and bad values throw ConfigError naming `path.key`; checks that the
  /// file required by `kind` is set.
  static LearnedSettings from_json(const json::object& obj, std::string_view kind,
                                   const std::string& path = "classifier");
  /// The keys `kind` uses (round-trips through from_json).
  json::object to_json(std::string_view kind) const;
};

/// True for "embedding_knn", "trained_head", "torchscript" and "transformer".
bool is_learned_kind(std::string_view kind);

/// The categories of kind transformer when the configuration lists none: one per label of
/// `model_dir`'s config.json id2label, in class-id order (the label is also the description).
/// Throws ClassifyError naming the file for a missing or malformed config.
classify::CategorySet checkpoint_categories(std::string_view model_dir);
/// The same for kind transformer's settings: with `adapters`, the labels of the served task's
/// adapter directory's config.json when it has one, else the base's.
classify::CategorySet checkpoint_categories(const LearnedSettings& settings);

/// `$MCPCLASS_CACHE_DIR`, else `$XDG_CACHE_HOME/mcpclass`, else `$HOME/.cache/mcpclass`.
std::string learned_cache_dir();
/// Expands a leading `cache:`, and `hf://ORG/NAME[@REVISION]` to its snapshot in the Hugging
/// Face cache (hub_cache.hpp; ClassifyError naming `mcpclass model pull` when it is not there);
/// other paths are returned unchanged.
std::string resolve_model_path(std::string_view path);

/// FNV-1a 64-bit of a file's bytes as 16 hex digits: the checksum manifests use to notice stale
/// caches (not a security measure). Throws ClassifyError when the file cannot be read.
std::string file_checksum(const std::string& path);
/// FNV-1a 64-bit of a string, 16 hex digits.
std::string text_checksum(std::string_view data);
/// A provenance id (classify::fnv1a64_id) of the files' bytes in order; paths that are empty or
/// not regular files are skipped, and none at all gives "". Reads every byte (about a second per
/// GB): computed once per load, never per request.
std::string files_id(const std::vector<std::string>& paths);

/// A name for a temporary file beside `path`: `<path>.tmp.<pid>.<random>`. Random too, because
/// two containers writing one volume can share a pid and would share the file.
std::string temporary_path(const std::string& path);

/// Writes `data` to `path` atomically: a temporary file in the same directory, flushed and
/// fsync'ed, then renamed over `path`; creates parent directories. A crash leaves either the
/// old or the new file, never a torn one. Throws ClassifyError.
void write_file_atomically(const std::string& path, std::string_view data);

}  // namespace mcpclass::learned
