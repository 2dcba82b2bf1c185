#include "mcpclass/classify/rule_classifier.hpp"
#include "mcpclass/config/config.hpp"
#include "mcpclass/learned/learned_classifier.hpp"

#include "config/remote_factory.hpp"

namespace mcpclass::config {

std::unique_ptr<classify::Classifier> make_classifier(
    const Config& config, const std::function<void(std::size_t, std::size_t)>& load_progress) {
  if (config.classifier.kind == "rules")
    return std::make_unique<classify::RuleClassifier>(config.categories, config.classifier.rules,
                                                      config.routing, "classifier");
  if (config.classifier.kind == "remote" || config.classifier.kind == "composite")
    return detail::make_remote_classifier(config, config.classifier.remote);
  if (learned::is_learned_kind(config.classifier.kind))
    return learned::make_learned_classifier(config.classifier.kind, config.categories,
                                            config.classifier.learned, config.routing,
                                            load_progress);
  throw ConfigError(
      "classifier.kind",
      "unsupported classifier kind '" + config.classifier.kind +
          "' (supported: rules, remote, composite, embedding_knn, trained_head, torchscript, "
          "transformer)");
}

}  // namespace mcpclass::config
