// Internal: a Hugging Face checkpoint directory's `config.json`, read as JSON and its labels.
// Needs none of the learned layer's libraries, so a configuration can take its categories from
// a model's id2label even where the learned component is not built.
#pragma once

#include <boost/json/object.hpp>

#include <string>
#include <vector>

namespace mcpclass::learned::detail {

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

}  // namespace mcpclass::learned::detail
