// Shared by the transformer tests: the checkpoint fixtures of tests/transformers/fixtures
// (written by tests/transformers/make_fixtures.py with their PyTorch reference logits) and
// copies of them to damage.
#pragma once

#include "architectures/bert/bert_model.hpp"
#include "mcpclass/classify/errors.hpp"
#include "mcpclass/tokenizers/text_tokenizer.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

namespace transformer_test {

inline std::string fixture(const std::string& name) {
  return MCPCLASS_SOURCE_DIR "/tests/transformers/fixtures/" + name;
}

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void write_file(const std::string& path, const std::string& data) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << data;
}

/// reference.json (make_fixtures.py) or modernbert-reference.json (make_modernbert_fixtures.py).
inline boost::json::object reference(const std::string& file = "reference.json") {
  std::ifstream in(fixture(file));
  std::stringstream s;
  s << in.rdbuf();
  return boost::json::parse(s.str()).as_object();
}

/// One reference model's token ids of every text.
inline std::vector<std::vector<std::int32_t>> reference_ids(const boost::json::object& m) {
  std::vector<std::vector<std::int32_t>> out;
  for (const auto& row : m.at("ids").as_array()) {
    out.emplace_back();
    for (const auto& id : row.as_array())
      out.back().push_back(static_cast<std::int32_t>(id.as_int64()));
  }
  return out;
}

/// One reference model's logits, texts × labels, row-major.
inline std::vector<float> reference_logits(const boost::json::object& m) {
  std::vector<float> out;
  for (const auto& row : m.at("logits").as_array())
    for (const auto& v : row.as_array()) out.push_back(static_cast<float>(v.to_number<double>()));
  return out;
}

/// Infinity when the sizes differ.
inline double max_abs_difference(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return std::numeric_limits<double>::infinity();
  double worst = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i)
    worst = std::max(worst, std::abs(static_cast<double>(a[i]) - b[i]));
  return worst;
}

inline std::vector<double> softmax(std::span<const float> logits) {
  const double mx = *std::max_element(logits.begin(), logits.end());
  std::vector<double> p;
  double sum = 0.0;
  for (const float v : logits) sum += p.emplace_back(std::exp(v - mx));
  for (auto& v : p) v /= sum;
  return p;
}

/// How far `got` (texts × labels logits) is from `want` as probabilities: texts whose argmax
/// differs, and the largest probability difference.
struct ProbabilityGap {
  std::size_t argmax_differs = 0;
  double worst = 0.0;
};

inline ProbabilityGap probability_gap(const std::vector<float>& got, const std::vector<float>& want,
                                      std::size_t labels) {
  ProbabilityGap g;
  if (got.size() != want.size()) return {want.size() / labels, 1.0};
  for (std::size_t i = 0; i < want.size() / labels; ++i) {
    const auto p = softmax(std::span(got.data() + i * labels, labels));
    const auto q = softmax(std::span(want.data() + i * labels, labels));
    if (std::max_element(p.begin(), p.end()) - p.begin() !=
        std::max_element(q.begin(), q.end()) - q.begin())
      ++g.argmax_differs;
    for (std::size_t j = 0; j < labels; ++j) g.worst = std::max(g.worst, std::abs(p[j] - q[j]));
  }
  return g;
}

/// The message of the ClassifyError loading `dir` (with the LoRA adapter `adapter`) as a
/// `Model` throws, or "(loaded)".
template <class Model>
std::string load_error(const std::string& dir, const std::string& adapter = {}) {
  try {
    Model model(dir, adapter);
  } catch (const mcpclass::classify::ClassifyError& e) {
    return e.what();
  }
  return "(loaded)";
}

/// Rewrites `file` (a JSON object) with `key` set to `value`.
inline void set_json(const std::string& file, const std::string& key,
                     const boost::json::value& value) {
  auto c = boost::json::parse(read_file(file)).as_object();
  c[key] = value;
  write_file(file, boost::json::serialize(c));
}

/// Rewrites dir/config.json with `key` set to `value`.
inline void set_config(const std::string& dir, const std::string& key,
                       const boost::json::value& value) {
  set_json(dir + "/config.json", key, value);
}

/// A reference's rows of numbers (embeddings), row after row.
inline std::vector<float> flat_rows(const boost::json::array& rows) {
  std::vector<float> out;
  for (const auto& row : rows)
    for (const auto& v : row.as_array()) out.push_back(static_cast<float>(v.to_number<double>()));
  return out;
}

struct Run {
  std::vector<std::vector<std::int32_t>> ids;
  std::vector<float> logits;  ///< texts × labels
};

/// Tokenises the texts of `reference_file` with the fixture's tokenizer.json and runs them
/// through `model` (anything with logits(span<const BertInput>, threads)) as one batch.
template <class Model>
Run run_reference_texts(const Model& model, const std::string& dir, std::size_t max_tokens,
                        const std::string& reference_file = "reference.json") {
  mcpclass::tokenizers::TokenizerOptions options;
  options.max_length = max_tokens;
  const auto tokenizer =
      mcpclass::tokenizers::open_text_tokenizer(dir + "/tokenizer.json", options);
  Run r;
  const auto texts = reference(reference_file);
  for (const auto& t : texts.at("texts").as_array())
    r.ids.push_back(tokenizer->encode(std::string(t.as_string())).ids);
  std::vector<mcpclass::architectures::BertInput> inputs;
  for (const auto& ids : r.ids) inputs.push_back({ids, {}});
  r.logits = model.logits(inputs, 1);
  return r;
}

/// A fresh copy of fixture `name` under the temporary directory, to modify. Named after this
/// process too: ctest runs each test case as its own process, in parallel, and two cases copying
/// the same variant under one name removed each other's files mid-read.
inline std::string copy_of(const std::string& name, const std::string& as) {
  namespace fs = std::filesystem;
  const auto dir =
      fs::temp_directory_path() / ("mcpclass-transformer-" + std::to_string(::getpid()) + "-" + as);
  fs::remove_all(dir);
  fs::copy(fixture(name), dir, fs::copy_options::recursive);
  return dir.string();
}

}  // namespace transformer_test
