// libFuzzer target: the config loader. Any bytes (up to 16 KiB) as a YAML or JSON document →
// parse_config; a document it accepts must build a classifier (or throw ConfigError), that
// classifier must classify a few texts with results that satisfy check_classification(), and
// to_json() must read back as the same configuration. All of that but the classification of the
// input's own text depends only on the effective document, so it is done once per document and
// kept: most inputs describe a document seen before (the defaults, a mutated prompt...), and
// building the default rules again under ASan was 60% of the time and found nothing new.
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

constexpr std::size_t kMaxInput = 16 * 1024;

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

// What this target builds for a configuration: its rules classifier. A remote classifier
// connects while it is built (starts `remote.command`, or reaches `remote.url`, with retries): a
// fuzzer must not run commands its input names, so for kind remote nothing is built, and for
// composite only the local rules side (make_classifier of the same document with kind rules).
std::unique_ptr<classify::Classifier> build(const config::Config& cfg) {
  if (cfg.classifier.kind == "remote") return nullptr;
  if (cfg.classifier.kind == "composite") {
    config::Config local = cfg;
    local.classifier.kind = "rules";
    return config::make_classifier(local);
  }
  return config::make_classifier(cfg);
}

void check(const classify::Classifier& classifier, std::string_view sample) {
  const auto result = classifier.classify(sample);
  try {
    classify::check_classification(result, classifier.categories());
  } catch (const std::exception& e) {
    fail("classification breaks its contract", e.what());
  }
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
  auto& cache = built();
  std::string key = json::serialize(doc);
  auto found = cache.find(key);
  if (found == cache.end()) {
    // Everything here depends on the effective document only: done once per document (it
    // compiles the document's rules twice more).
    try {
      const config::Config again = config::config_from_json(doc);
      if (again.to_json() != doc) fail("to_json does not round-trip", key);
    } catch (const config::ConfigError& e) {
      fail("to_json output rejected", std::string(e.what()) + ": " + key);
    }
    if (cache.size() >= 256) cache.clear();
    std::unique_ptr<classify::Classifier> made;
    try {
      made = build(cfg);
    } catch (const config::ConfigError&) {
    }
    if (made) {
      for (std::string_view sample :
           {std::string_view{}, std::string_view{"write a python function to sort a list"},
            std::string_view{"translate this to French"}})
        check(*made, sample);
    }
    found = cache.emplace(std::move(key), std::move(made)).first;
  }
  // The input's own text, as a query, is the part that changes from one input to the next.
  if (found->second) check(*found->second, text.substr(0, 512));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  // Real configurations are a few KiB (the default one 11 KiB); larger inputs only make YAML and
  // ASan slower, they reach no other code.
  if (size > kMaxInput) return 0;
  exercise(text, config::Format::automatic);
  // Read as JSON too, unless the automatic reading already was JSON (first non-blank byte '{').
  const auto first = text.find_first_not_of(" \t\r\n");
  const bool read_as_json = first != std::string_view::npos && text[first] == '{';
  if (!text.empty() && !read_as_json) exercise(text, config::Format::json);
  return 0;
}
