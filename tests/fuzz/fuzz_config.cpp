// libFuzzer target: the config loader. Any bytes as a YAML or JSON document → parse_config; a
// document it accepts must build a classifier (or throw ConfigError), that classifier must
// classify a few texts with results that satisfy check_classification(), and to_json() must read
// back as the same configuration. Most accepted inputs describe the same few effective documents
// (the defaults), so their classifiers are built once and kept: building the default rules again
// under ASan was 60% of the time and found nothing new.
#include "mcpclass/classify/classification.hpp"
#include "mcpclass/config/config.hpp"

#include <boost/json.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace {

namespace json = boost::json;
using namespace mcpclass;

[[noreturn]] void fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "fuzz_config: %s: %s\n", what, detail.c_str());
  std::abort();
}

// Classifiers by the effective document they were built from; nullptr when it was refused.
// Deliberately leaked, like every libFuzzer target's state.
std::map<std::string, std::unique_ptr<classify::Classifier>>& built() {
  static auto* m = new std::map<std::string, std::unique_ptr<classify::Classifier>>();
  return *m;
}

void exercise(std::string_view text, config::Format format) {
  std::optional<config::Config> parsed;
  try {
    parsed.emplace(config::parse_config(text, format));
  } catch (const config::ConfigError&) {
    return;
  }
  const config::Config& cfg = *parsed;
  const json::object doc = cfg.to_json();
  try {
    const config::Config again = config::config_from_json(doc);
    if (again.to_json() != doc) fail("to_json does not round-trip", json::serialize(doc));
  } catch (const config::ConfigError& e) {
    fail("to_json output rejected", std::string(e.what()) + ": " + json::serialize(doc));
  }
  auto& cache = built();
  std::string key = json::serialize(doc);
  auto found = cache.find(key);
  if (found == cache.end()) {
    if (cache.size() >= 256) cache.clear();
    std::unique_ptr<classify::Classifier> made;
    try {
      made = config::make_classifier(cfg);
    } catch (const config::ConfigError&) {
    }
    found = cache.emplace(std::move(key), std::move(made)).first;
  }
  if (!found->second) return;
  const classify::Classifier* classifier = found->second.get();
  for (std::string_view sample :
       {std::string_view{}, std::string_view{"write a python function to sort a list"},
        std::string_view{"translate this to French"}, text.substr(0, 512)}) {
    const auto result = classifier->classify(sample);
    try {
      classify::check_classification(result, classifier->categories());
    } catch (const std::exception& e) {
      fail("classification breaks its contract", e.what());
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  exercise(text, config::Format::automatic);
  if (!text.empty() && text.front() != '{') exercise(text, config::Format::json);
  return 0;
}
