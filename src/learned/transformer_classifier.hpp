// Internal: `classifier: {kind: transformer, model: DIR}`, a Hugging Face sequence-classification
// checkpoint directory (config.json, model.safetensors or its sharded index, tokenizer.json)
// run natively (bert_model.hpp) behind the Classification contract.
#pragma once

#include "mcpclass/classify/category.hpp"
#include "mcpclass/classify/classifier.hpp"
#include "mcpclass/classify/routing_policy.hpp"
#include "mcpclass/learned/learned_classifier.hpp"
#include "mcpclass/learned/learned_settings.hpp"

#include <memory>

namespace mcpclass::learned::detail {

/// Loads settings.model (with settings.adapter merged), reporting `load_progress` as
/// make_learned_classifier documents; each id2label label must name a configured category. Throws
/// ClassifyError naming the file for a bad checkpoint or tokenizer, or the unmatched label.
/// Thread-safety: the returned classifier is immutable and may be used concurrently.
std::unique_ptr<classify::Classifier> make_transformer_classifier(
    const classify::CategorySet& categories, const LearnedSettings& settings,
    const classify::RoutingPolicy& policy, const LearnedProgress& load_progress = {});

}  // namespace mcpclass::learned::detail
