// classify and list: one-shot commands over the configured classifier.
#include "cli/app.hpp"
#include "mcpclass/service/mcp_tools.hpp"

#include <fmt/format.h>

#include <cstdio>

namespace mcpclass::cli {

config::Config load_config(const std::string& path) {
  return path.empty() ? config::default_config() : config::load_config_file(path);
}

int run_classify(const config::Config& config, const std::string& text, bool probabilities) {
  if (auto problem = service::text_problem(text, config.server.max_text_length)) {
    fmt::print(stderr, "mcpclass: {}\n", *problem);
    return kUsageError;
  }
  const auto classifier = config::make_classifier(config);
  const classify::Classification c = classifier->classify(text, {probabilities});
  boost::json::object out = classify::to_wire(c, probabilities);
  out["category"] = c.category;
  fmt::print("{}\n", boost::json::serialize(out));
  return kOk;
}

int run_list(const config::Config& config) {
  fmt::print("{}\n", boost::json::serialize(service::categories_document(config.categories)));
  return kOk;
}

int run_config(const config::Config& config) {
  fmt::print("{}\n", boost::json::serialize(config.to_json()));
  return kOk;
}

}  // namespace mcpclass::cli
