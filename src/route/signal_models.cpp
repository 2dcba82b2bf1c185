// The models the signals of a configuration need, loaded only when a signal needs them.
#include "mcpclass/classify/errors.hpp"
#include "mcpclass/learned/learned_settings.hpp"
#include "mcpclass/route/router.hpp"
#include "util/config_reader.hpp"

#include <fmt/format.h>
#include <boost/json.hpp>

namespace mcpclass::route {

namespace json = boost::json;
namespace strict = util::strict;

namespace {

std::shared_ptr<const learned::SentenceEncoder> embedding_encoder(const config::Config& config) {
  const auto& router = config.router;
  learned::EncoderOptions options;
  std::string path = "routing.embedding_model";
  if (router.embedding_model) {
    options.encoder_path = learned::resolve_model_path(router.embedding_model->encoder);
    options.tokenizer_path = learned::resolve_model_path(router.embedding_model->tokenizer);
    options.max_tokens = router.embedding_model->max_tokens;
    options.layers = router.embedding_model->layers;
    options.dimensions = router.embedding_model->dimensions;
    options.prompt = router.embedding_model->prompt;
  } else if (config.classifier.kind == "embedding_knn" ||
             config.classifier.kind == "trained_head") {
    const auto& l = config.classifier.learned;
    options.encoder_path = learned::resolve_model_path(l.encoder);
    options.tokenizer_path = learned::resolve_model_path(l.tokenizer);
    options.max_tokens = l.max_tokens;
    options.layers = l.layers;
    options.dimensions = l.dimensions;
    options.prompt = l.prompt;
    path = "classifier.encoder";
  } else {
    throw classify::ConfigError("routing.signals.embeddings",
                                "embedding signals need an encoder: set routing.embedding_model, "
                                "or use an embedding_knn or trained_head classifier");
  }
  try {
    return learned::load_sentence_encoder(options);
  } catch (const classify::ConfigError&) {
    throw;
  } catch (const classify::ClassifyError& e) {
    throw classify::ConfigError(path, e.what());
  }
}

// A jailbreak signal's `classifier` section is a configuration document's `classifier` (with
// its own `categories`, optional for checkpoints that name their labels).
std::shared_ptr<const classify::Classifier> jailbreak_classifier(const json::object& section,
                                                                 const std::string& path) {
  json::object document;
  json::object classifier = section;
  if (auto it = classifier.find("categories"); it != classifier.end()) {
    document["categories"] = it->value();
    classifier.erase(it);
  }
  document["classifier"] = std::move(classifier);
  try {
    return config::make_classifier(config::config_from_json(document));
  } catch (const classify::ConfigError& e) {
    throw classify::ConfigError(
        e.path().empty() ? path : path + e.path().substr(std::string_view("classifier").size()),
        e.message());
  } catch (const classify::ClassifyError& e) {
    throw classify::ConfigError(path, e.what());
  }
}

}  // namespace

routing::SignalModels make_signal_models(const config::Config& config,
                                         std::shared_ptr<const classify::Classifier> classifier,
                                         std::optional<classify::Provenance> provenance) {
  routing::SignalModels models;
  models.provenance = provenance ? std::move(*provenance) : classify::provenance_of(*classifier, 1);
  models.classifier = std::move(classifier);
  const auto& signals = config.router.signals;
  // The semantic cache compares queries by their embeddings when an encoder is configured, and
  // by their exact text otherwise.
  const bool cache_encoder =
      config.route && config.route->semantic_cache.enabled &&
      (config.router.embedding_model || config.classifier.kind == "embedding_knn" ||
       config.classifier.kind == "trained_head");
  if (!signals.embeddings.empty() || cache_encoder) models.encoder = embedding_encoder(config);
  for (std::size_t i = 0; i < signals.pii.size(); ++i) {
    if (signals.pii[i].source == routing::PiiSource::builtin || models.pii_model) continue;
    if (!config.token_classifier)
      throw classify::ConfigError(
          strict::member_path(strict::index_path("routing.signals.pii", i), "source"),
          "a model source needs the token_classifier section");
    models.pii_model = config::make_token_classifier(config);
  }
  for (std::size_t i = 0; i < signals.jailbreak.size(); ++i) {
    const auto& j = signals.jailbreak[i];
    if (j.method != routing::JailbreakSignalSettings::Method::classifier) continue;
    models.jailbreak[j.name] = jailbreak_classifier(
        j.classifier,
        strict::member_path(strict::index_path("routing.signals.jailbreak", i), "classifier"));
  }
  return models;
}

}  // namespace mcpclass::route
