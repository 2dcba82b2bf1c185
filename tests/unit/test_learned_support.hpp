// Shared by the learned-classifier tests: the converted USE-lite model (fetched and converted on
// first use by models/fetch-use-lite.sh, then cached) and its TF.js reference vectors.
#pragma once

#include "mcpclass/learned/learned_settings.hpp"

#include <doctest/doctest.h>
#include <boost/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace learned_test {

/// The cache folder holding encoder.pt, tokenizer.model and reference.json. Runs the fetch script
/// (flock-serialised, instant when cached); a failure fails the calling test with the reason.
inline std::string model_dir() {
  const std::string dir = mcpclass::learned::learned_cache_dir() + "/use-lite";
  static const bool ready = [] {
    const std::string cmd = "'" MCPCLASS_SOURCE_DIR
                            "/models/fetch-use-lite.sh' '" MCPCLASS_BINARY_DIR "/mcpclass' 1>&2";
    return std::system(cmd.c_str()) == 0;
  }();
  REQUIRE_MESSAGE(ready, "models/fetch-use-lite.sh failed (see its message above)");
  return dir;
}

inline boost::json::object reference() {
  std::ifstream in(MCPCLASS_SOURCE_DIR "/models/use-lite/reference.json");
  std::stringstream s;
  s << in.rdbuf();
  return boost::json::parse(s.str()).as_object();
}

inline std::string temp_dir(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / ("mcpclass-test-" + name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

}  // namespace learned_test
