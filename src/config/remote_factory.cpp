#include "config/remote_factory.hpp"

#include "mcpclass/classify/composite_classifier.hpp"
#include "mcpclass/remote/http_classify_classifier.hpp"
#include "mcpclass/remote/remote_classifier.hpp"
#include "mcpclass/remote/remote_token_classifier.hpp"

namespace mcpclass::config::detail {

json::object take_remote_sections(json::object& classifier_section) {
  json::object out;
  for (const char* key : {"remote", "composite"}) {
    if (auto* v = classifier_section.if_contains(key)) {
      out[key] = std::move(*v);
      classifier_section.erase(key);
    }
  }
  return out;
}

void check_remote_sections(std::string_view kind, const json::object& sections) {
  const bool remote_kind = kind == "remote" || kind == "composite";
  if (!remote_kind) {
    for (const char* key : {"remote", "composite"})
      if (sections.contains(key))
        throw ConfigError(std::string("classifier.") + key,
                          "only allowed with kind remote or composite");
    return;
  }
  const auto* remote = sections.if_contains("remote");
  if (remote == nullptr)
    throw ConfigError("classifier.remote", "required for kind " + std::string(kind));
  (void)remote::RemoteClassifierOptions::from_json(*remote, "classifier.remote");
  if (const auto* c = sections.if_contains("composite")) {
    if (kind != "composite")
      throw ConfigError("classifier.composite", "only allowed with kind composite");
    (void)classify::CompositeOptions::from_json(*c, "classifier.composite");
  }
}

std::unique_ptr<classify::Classifier> make_remote_classifier(const Config& config,
                                                             const json::object& sections) {
  check_remote_sections(config.classifier.kind, sections);
  auto options =
      remote::RemoteClassifierOptions::from_json(sections.at("remote"), "classifier.remote");
  std::unique_ptr<classify::Classifier> remote;
  if (options.http_classify()) {
    remote = std::make_unique<remote::HttpClassifyClassifier>(std::move(options), config.categories,
                                                              config.routing);
  } else {
    remote = std::make_unique<remote::RemoteClassifier>(std::move(options));
  }
  if (config.classifier.kind == "remote") return remote;
  const auto* c = sections.if_contains("composite");
  const auto composite = c ? classify::CompositeOptions::from_json(*c, "classifier.composite")
                           : classify::CompositeOptions{};
  Config local = config;
  local.classifier.kind = "rules";
  return std::make_unique<classify::CompositeClassifier>(make_classifier(local), std::move(remote),
                                                         composite);
}

TokenClassifierSection take_remote_token_classifier(const json::value& section) {
  const auto* object = section.if_object();
  const auto* remote = object ? object->if_contains("remote") : nullptr;
  if (remote == nullptr)
    return {learned::TokenClassifierSettings::from_json(section, "token_classifier"), {}};
  if (remote::RemoteClassifierOptions::from_json(*remote, "token_classifier.remote")
          .http_classify())
    throw ConfigError("token_classifier.remote.protocol",
                      "http_classify answers label distributions; a remote token classifier is "
                      "an MCP server's span tool");
  TokenClassifierSection out;
  out.remote = remote->as_object();
  for (const auto& kv : *object) {
    if (kv.key() == "remote") continue;
    if (kv.key() != "tool")
      throw ConfigError("token_classifier." + std::string(kv.key()),
                        "does not apply to a remote token classifier (its server has the model)");
    if (!kv.value().is_string() || kv.value().get_string().empty())
      throw ConfigError("token_classifier.tool", "must be a non-empty string");
    out.settings.tool = kv.value().get_string();
  }
  return out;
}

}  // namespace mcpclass::config::detail

namespace mcpclass::config {

std::unique_ptr<learned::TokenClassifier> make_token_classifier(const Config& config) {
  if (!config.token_classifier) return nullptr;
  if (!config.token_classifier_remote.empty()) {
    auto options = remote::RemoteClassifierOptions::from_json(config.token_classifier_remote,
                                                              "token_classifier.remote");
    return std::make_unique<remote::RemoteTokenClassifier>(std::move(options));
  }
  try {
    return learned::make_token_classifier(*config.token_classifier);
  } catch (const ConfigError&) {
    throw;
  } catch (const classify::ClassifyError& e) {
    throw ConfigError("token_classifier.model", e.what());
  }
}

}  // namespace mcpclass::config
