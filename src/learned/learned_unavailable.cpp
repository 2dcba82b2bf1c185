// The learned classifier entry points of a build without the learned component: every one
// reports clearly that the component is missing.
#include "mcpclass/learned/embedding_encoder.hpp"
#include "mcpclass/learned/learned_classifier.hpp"
#include "mcpclass/learned/token_classifier.hpp"

#ifndef MCPCLASS_WITH_LEARNED

#include "mcpclass/classify/errors.hpp"

namespace mcpclass::learned {

using classify::CategorySet;
using classify::Classifier;
using classify::ConfigError;
using classify::RoutingPolicy;

namespace {

[[noreturn]] void unavailable(std::string_view what) {
  throw ConfigError("classifier.kind", std::string(what) +
                                           " needs the learned component; this build has "
                                           "MCPCLASS_WITH_LEARNED=OFF (use kind: rules)");
}

}  // namespace

bool learned_available() noexcept {
  return false;
}

std::unique_ptr<Classifier> make_learned_classifier(std::string_view kind, const CategorySet&,
                                                    const LearnedSettings&, const RoutingPolicy&,
                                                    const LearnedProgress&) {
  // Appended, not `"'" + std::string(kind)`: GCC 12 -O3 reports a false -Wrestrict on that.
  std::string what = "'";
  what.append(kind).append("'");
  unavailable(what);
}

std::string build_knn_index(const CategorySet&, const LearnedSettings&, const LearnedProgress&,
                            bool*) {
  unavailable("building a kNN index");
}

void add_knn_examples(Classifier&, const std::vector<LabelledExample>&, const LearnedProgress&) {
  unavailable("adding kNN examples");
}

HeadTrainingReport train_head(const CategorySet&, const LearnedSettings&,
                              const std::vector<LabelledExample>&, const std::string&,
                              const HeadTrainingOptions&, const LearnedProgress&) {
  unavailable("training a head");
}

void export_sequence_classifier(const LearnedSettings&, const std::string&) {
  unavailable("exporting a sequence classifier");
}

std::shared_ptr<const SentenceEncoder> load_sentence_encoder(const EncoderOptions&) {
  unavailable("a sentence encoder");
}

json::object inspect_checkpoint(const std::string&, const InspectOptions&, const LearnedProgress&) {
  unavailable("inspecting a transformer checkpoint");
}

void convert_use_lite(const std::string&, const std::string&) {
  unavailable("converting USE-lite");
}

std::unique_ptr<TokenClassifier> make_token_classifier(const TokenClassifierSettings&) {
  unavailable("a token classifier");
}

}  // namespace mcpclass::learned

#endif
