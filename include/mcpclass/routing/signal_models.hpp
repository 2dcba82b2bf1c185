// The models the router's signals read, built from the configuration by whoever assembles a
// router (route::make_signal_models). Plain value.
// Thread-safety: the models are immutable and may be used from any thread.
#pragma once

#include "mcpclass/classify/classifier.hpp"
#include "mcpclass/classify/provenance.hpp"
#include "mcpclass/learned/embedding_encoder.hpp"
#include "mcpclass/learned/token_classifier.hpp"

#include <map>
#include <memory>
#include <string>

namespace mcpclass::routing {

/// The models signals read; each may be null when no signal needs it.
struct SignalModels {
  std::shared_ptr<const classify::Classifier> classifier;  ///< domains, the default decision
  /// The classifier's provenance with the generation serving it: `route`'s x-mcpclass-* headers.
  classify::Provenance provenance;
  std::shared_ptr<const learned::SentenceEncoder> encoder;    ///< embeddings
  std::shared_ptr<const learned::TokenClassifier> pii_model;  ///< pii with source model/both
  /// jailbreak signals with method classifier, by signal name.
  std::map<std::string, std::shared_ptr<const classify::Classifier>, std::less<>> jailbreak;
};

}  // namespace mcpclass::routing
