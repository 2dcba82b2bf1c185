#include "cli/detect_command.hpp"

#include "cli/app.hpp"
#include "mcpclass/classify/errors.hpp"
#include "mcpclass/config/config.hpp"
#include "mcpclass/learned/token_classifier.hpp"
#include "mcpclass/service/token_spans.hpp"

#include <fmt/format.h>
#include <boost/json.hpp>

namespace mcpclass::cli {

CLI::App* add_detect_command(CLI::App& app, DetectOptions& o) {
  auto* command = app.add_subcommand(
      "detect",
      "Print the labelled spans (PII) a token-classification checkpoint finds in each text, as "
      "JSON: {spans: [{entity_group, score, word, start, end, byte_start, byte_end}], "
      "aggregation}");
  command->add_option("text", o.texts, "Texts to search")->required();
  command->add_option("-c,--config", o.config_path,
                      "Configuration whose token_classifier section to use");
  command->add_option("--model", o.model,
                      "A *ForTokenClassification checkpoint directory (instead of the config's)");
  command->add_option("--aggregation", o.aggregation,
                      "none, simple, first, average or max (default: the configured one, or "
                      "simple)");
  command->add_option("--stride", o.stride, "Tokens shared by consecutive windows of a long text");
  return command;
}

int run_detect(const DetectOptions& o) {
  std::unique_ptr<learned::TokenClassifier> classifier;
  std::size_t max_text_length = 0;
  try {
    const auto config = load_config(o.config_path);
    max_text_length = config.server.max_text_length;
    if (!config.token_classifier && o.model.empty())
      throw config::ConfigError("token_classifier",
                                "is not configured (give --model DIR or a config with a "
                                "token_classifier section)");
    auto local = config;
    if (!o.model.empty()) {
      local.token_classifier = learned::TokenClassifierSettings{};
      local.token_classifier->model = o.model;
      local.token_classifier_remote = {};
    }
    if (o.stride) local.token_classifier->stride = *o.stride;
    // A checkpoint that fails to load is a runtime error here, as for `classify`.
    classifier = local.token_classifier_remote.empty()
                     ? learned::make_token_classifier(*local.token_classifier)
                     : config::make_token_classifier(local);
  } catch (const config::ConfigError& e) {
    fmt::print(stderr, "mcpclass detect: configuration error: {}\n", e.what());
    return kUsageError;
  } catch (const std::exception& e) {  // a checkpoint that fails to load, like `classify`
    fmt::print(stderr, "mcpclass detect: {}\n", e.what());
    return kRuntimeError;
  }
  const std::optional<std::string_view> aggregation =
      o.aggregation.empty() ? std::nullopt : std::optional<std::string_view>(o.aggregation);
  int status = kOk;
  for (const auto& text : o.texts) {
    try {
      fmt::print("{}\n", boost::json::serialize(service::detect_spans(
                             *classifier, text, aggregation, max_text_length)));
    } catch (const service::SpanRequestError& e) {
      fmt::print(stderr, "mcpclass detect: {}\n", e.what());
      return kUsageError;
    } catch (const std::exception& e) {
      fmt::print(stderr, "mcpclass detect: {}\n", e.what());
      status = kRuntimeError;
    }
  }
  return status;
}

}  // namespace mcpclass::cli
