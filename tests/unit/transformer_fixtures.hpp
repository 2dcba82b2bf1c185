// Shared by the transformer tests: the checkpoint fixtures of tests/transformers/fixtures
// (written by tests/transformers/make_fixtures.py with their PyTorch reference logits) and
// copies of them to damage.
#pragma once

#include "learned/bert_model.hpp"
#include "mcpclass/classify/errors.hpp"

#include <boost/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace transformer_test {

inline std::string fixture(const std::string& name) {
  return MCPCLASS_SOURCE_DIR "/tests/transformers/fixtures/" + name;
}

inline boost::json::object reference() {
  std::ifstream in(fixture("reference.json"));
  std::stringstream s;
  s << in.rdbuf();
  return boost::json::parse(s.str()).as_object();
}

/// A fresh copy of fixture `name` under the temporary directory, to modify.
inline std::string copy_of(const std::string& name, const std::string& as) {
  namespace fs = std::filesystem;
  const auto dir = fs::temp_directory_path() / ("mcpclass-transformer-" + as);
  fs::remove_all(dir);
  fs::copy(fixture(name), dir, fs::copy_options::recursive);
  return dir.string();
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

/// What loading `dir` (with the LoRA adapter `adapter`) throws, or "(loaded)".
inline std::string load_error(const std::string& dir, const std::string& adapter = {}) {
  try {
    mcpclass::learned::detail::BertSequenceModel model(dir, adapter);
  } catch (const mcpclass::classify::ClassifyError& e) {
    return e.what();
  }
  return "(loaded)";
}

}  // namespace transformer_test
