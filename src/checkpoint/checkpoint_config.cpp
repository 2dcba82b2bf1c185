#include "checkpoint/checkpoint_config.hpp"

#include "mcpclass/classify/errors.hpp"

#include <boost/json.hpp>

#include <charconv>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace mcpclass::checkpoint {

namespace json = boost::json;

namespace {

// Published configs are a few kilobytes; the bound keeps a wrong path (a weights file) cheap.
constexpr std::uintmax_t kMaxConfigBytes = 4 * 1024 * 1024;
// More labels than any classifier has; bounds the vector a hostile num_labels would allocate.
constexpr std::int64_t kMaxLabels = 100'000;

}  // namespace

void config_error(const std::string& file, const std::string& why) {
  throw classify::ClassifyError("'" + file + "': " + why);
}

std::string config_architecture(const json::object& c, const std::string& file) {
  const auto* arch = c.if_contains("architectures");
  if (arch == nullptr || !arch->is_array() || arch->as_array().size() != 1 ||
      !arch->as_array()[0].is_string())
    config_error(file, "architectures must list exactly one architecture");
  return std::string(arch->as_array()[0].as_string());
}

std::string config_string(const json::object& c, const std::string& file, const char* key,
                          const std::string& fallback) {
  const auto* v = c.if_contains(key);
  if (v == nullptr || v->is_null()) {
    if (fallback.empty()) config_error(file, std::string(key) + " is missing");
    return fallback;
  }
  if (!v->is_string()) config_error(file, std::string(key) + " must be a string");
  return std::string(v->as_string());
}

std::size_t config_size(const json::object& c, const std::string& file, const char* key,
                        std::int64_t max, std::int64_t fallback) {
  const auto* v = c.if_contains(key);
  if (v == nullptr || v->is_null()) {
    if (fallback == 0) config_error(file, std::string(key) + " is missing");
    return static_cast<std::size_t>(fallback);
  }
  if (!v->is_int64() || v->as_int64() < 1 || v->as_int64() > max)
    config_error(file,
                 std::string(key) + " must be an integer in [1, " + std::to_string(max) + "]");
  return static_cast<std::size_t>(v->as_int64());
}

bool config_flag(const json::object& c, const std::string& file, const char* key, bool fallback) {
  const auto* v = c.if_contains(key);
  if (v == nullptr || v->is_null()) return fallback;
  if (!v->is_bool()) config_error(file, std::string(key) + " must be true or false");
  return v->as_bool();
}

double config_number(const json::object& c, const std::string& file, const char* key, double low,
                     double high, double fallback) {
  const auto* v = c.if_contains(key);
  if (v == nullptr || v->is_null()) return fallback;
  boost::system::error_code ec;
  const double x = v->to_number<double>(ec);
  if (ec || !(x > low && x < high)) {
    std::ostringstream range;
    range << "(" << low << ", " << high << ")";
    config_error(file, std::string(key) + " must be a number in " + range.str());
  }
  return x;
}

json::value read_json_file(const std::string& path, const std::string& missing) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) throw classify::ClassifyError("cannot read '" + path + "' (" + missing + ")");
  if (size > kMaxConfigBytes) config_error(path, "larger than 4 MiB, not a model config");
  std::ifstream in(path, std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), {});
  boost::system::error_code jec;
  auto doc = json::parse(text, jec);
  if (jec) config_error(path, "not JSON");
  return doc;
}

json::object read_json_object_file(const std::string& path, const std::string& missing) {
  auto doc = read_json_file(path, missing);
  if (!doc.is_object()) config_error(path, "not a JSON object");
  return std::move(doc.as_object());
}

json::object read_checkpoint_config(const std::string& dir) {
  return read_json_object_file((std::filesystem::path(dir) / "config.json").string(),
                               "a checkpoint directory has one");
}

std::vector<std::string> checkpoint_labels(const json::object& config, const std::string& file) {
  const auto* id2label = config.if_contains("id2label");
  if (id2label == nullptr || id2label->is_null()) {
    std::int64_t n = 2;
    if (const auto* v = config.if_contains("num_labels")) {
      if (!v->is_int64() || v->as_int64() < 1 || v->as_int64() > kMaxLabels)
        config_error(file, "num_labels must be an integer in [1, 100000]");
      n = v->as_int64();
    }
    std::vector<std::string> out;
    for (std::int64_t i = 0; i < n; ++i) out.push_back("LABEL_" + std::to_string(i));
    return out;
  }
  if (!id2label->is_object() || id2label->as_object().empty())
    config_error(file, "id2label must be a non-empty object");
  const auto& map = id2label->as_object();
  if (map.size() > static_cast<std::size_t>(kMaxLabels))
    config_error(file, "id2label has too many labels");
  std::vector<std::string> out(map.size());
  std::set<std::string> seen;
  for (const auto& [key, value] : map) {
    std::size_t id = 0;
    const auto [end, err] = std::from_chars(key.data(), key.data() + key.size(), id);
    if (err != std::errc() || end != key.data() + key.size() || id >= out.size())
      config_error(file, "id2label key '" + std::string(key) + "' is not a class id in [0, " +
                             std::to_string(out.size()) + ")");
    const auto* label = value.if_string();
    if (label == nullptr || label->empty())
      config_error(file, "id2label[" + std::string(key) + "] must be a non-empty string");
    if (!out[id].empty()) config_error(file, "id2label repeats class id " + std::to_string(id));
    if (!seen.insert(std::string(*label)).second)
      config_error(file, "id2label names label '" + std::string(*label) + "' twice");
    out[id] = std::string(*label);
  }
  return out;
}

void check_sequence_head(const json::object& c, const std::string& file, std::size_t labels) {
  if (labels == 1) {
    // transformers reads an unset problem_type of 1 label as regression: one score, no softmax.
    const auto problem = config_string(c, file, "problem_type", "regression");
    if (problem != "regression")
      config_error(file, "problem_type '" + problem +
                             "' needs at least 2 labels (1 label is a score: regression)");
    return;
  }
  const auto problem = config_string(c, file, "problem_type", "single_label_classification");
  if (problem != "single_label_classification")
    config_error(file, "problem_type '" + problem +
                           "' is not supported yet (single_label_classification: softmax over "
                           "labels)");
}

const char* to_string(ScoreActivation a) {
  switch (a) {
    case ScoreActivation::sigmoid:
      return "sigmoid";
    case ScoreActivation::identity:
      return "identity";
    case ScoreActivation::tanh:
      return "tanh";
  }
  return "sigmoid";
}

ScoreActivation score_activation(const json::object& c, const std::string& file) {
  const json::value* name = nullptr;
  std::string key;
  if (const auto* st = c.if_contains("sentence_transformers"); st != nullptr && st->is_object()) {
    name = st->as_object().if_contains("activation_fn");
    key = "sentence_transformers.activation_fn";
  }
  if (name == nullptr || name->is_null()) {
    name = c.if_contains("sbert_ce_default_activation_function");
    key = "sbert_ce_default_activation_function";
  }
  if (name == nullptr || name->is_null()) return ScoreActivation::sigmoid;
  const auto* text = name->if_string();
  if (text != nullptr) {
    if (*text == "torch.nn.modules.activation.Sigmoid") return ScoreActivation::sigmoid;
    if (*text == "torch.nn.modules.linear.Identity") return ScoreActivation::identity;
    if (*text == "torch.nn.modules.activation.Tanh") return ScoreActivation::tanh;
  }
  config_error(file, key + " " +
                         (text != nullptr ? "'" + std::string(*text) + "'" : "(not a string)") +
                         " is not supported (torch.nn.modules.activation.Sigmoid, "
                         "torch.nn.modules.linear.Identity or torch.nn.modules.activation.Tanh)");
}

}  // namespace mcpclass::checkpoint
