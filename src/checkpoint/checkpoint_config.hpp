// Internal: a Hugging Face checkpoint directory's `config.json`, read as JSON and its labels.
// Needs none of the learned layer's libraries, so a configuration can take its categories from
// a model's id2label even where the learned component is not built.
#pragma once

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace mcpclass::checkpoint {

/// `path` as JSON (at most 4 MiB). Throws ClassifyError naming the file; `missing` says, for a
/// file that cannot be read, where it should be.
boost::json::value read_json_file(const std::string& path, const std::string& missing);

/// `path` as a JSON object (at most 4 MiB): config.json, adapter_config.json. Throws ClassifyError
/// naming the file; `missing` says, for a file that cannot be read, where it should be.
boost::json::object read_json_object_file(const std::string& path, const std::string& missing);

/// `dir/config.json` as a JSON object (at most 4 MiB). Throws ClassifyError naming the file.
boost::json::object read_checkpoint_config(const std::string& dir);

/// The labels in class-id order: `id2label` (keys "0".."n-1", each once), else `num_labels`
/// (default 2) labels named LABEL_i as transformers names them. Throws ClassifyError naming
/// `file` and the key for a malformed, gapped or repeated id2label.
std::vector<std::string> checkpoint_labels(const boost::json::object& config,
                                           const std::string& file);

// The typed readers of the architecture configs (bert_config, modernbert_config). Each throws
// ClassifyError "'file': why" naming the key. A key that is absent or null takes `fallback`;
// an empty string fallback (or 0 for a size) means the key is required.

/// A sequence head's checks, the same for every architecture: at least 2 labels with
/// `problem_type` absent or single_label_classification (softmax over the labels), or 1 label
/// with `problem_type` absent or regression (a cross-encoder reranker's one relevance score).
/// Throws ClassifyError naming `file`.
void check_sequence_head(const boost::json::object& c, const std::string& file, std::size_t labels);

/// How a 1-label head's logit becomes a relevance score, as sentence-transformers' CrossEncoder
/// applies it.
enum class ScoreActivation { sigmoid, identity, tanh };
/// "sigmoid", "identity", "tanh".
const char* to_string(ScoreActivation a);
/// The activation config.json names: `sentence_transformers.activation_fn` (CrossEncoder 4 and
/// later), else `sbert_ce_default_activation_function` (earlier ones), else sigmoid, the
/// CrossEncoder's default for 1 label. Throws ClassifyError naming `file` and the key for a
/// name other than torch.nn's Sigmoid, Identity or Tanh.
ScoreActivation score_activation(const boost::json::object& c, const std::string& file);

/// Throws ClassifyError "'file': why".
[[noreturn]] void config_error(const std::string& file, const std::string& why);

/// The one architecture `architectures` lists.
std::string config_architecture(const boost::json::object& c, const std::string& file);

std::string config_string(const boost::json::object& c, const std::string& file, const char* key,
                          const std::string& fallback);

/// An integer in [1, max]: bounds what a hostile config could make the loader allocate before
/// the weights themselves are checked against it.
std::size_t config_size(const boost::json::object& c, const std::string& file, const char* key,
                        std::int64_t max, std::int64_t fallback = 0);

bool config_flag(const boost::json::object& c, const std::string& file, const char* key,
                 bool fallback);

/// A number in the open interval (low, high).
double config_number(const boost::json::object& c, const std::string& file, const char* key,
                     double low, double high, double fallback);

}  // namespace mcpclass::checkpoint
