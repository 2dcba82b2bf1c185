// Classifier's default answers to a sentence pair and a reranking (classifier.hpp), and
// ForwardingClassifier's check of its inner classifier.
#include "mcpclass/classify/classifier.hpp"

#include "mcpclass/classify/errors.hpp"
#include "mcpclass/classify/forwarding_classifier.hpp"

#include <stdexcept>

namespace mcpclass::classify {

std::vector<Classification> Classifier::classify_pairs(std::span<const TextPair>,
                                                       const ClassifyOptions&) const {
  throw ClassifyError("the " + kind() +
                      " classifier classifies one text; a sentence pair (text_pair) needs a "
                      "pair model: kind transformer over a checkpoint whose tokenizer.json has a "
                      "pair template (an NLI, fact-check or cross-encoder model)");
}

std::vector<RerankScore> Classifier::rerank(std::string_view, std::span<const std::string_view>,
                                            const ClassifyOptions&) const {
  throw ClassifyError("the " + kind() +
                      " classifier does not rerank: reranking needs a cross-encoder, kind "
                      "transformer over a checkpoint with 1 label (e.g. BAAI/bge-reranker-base)");
}

namespace {

std::string own_task(const Classifier& classifier) {
  const json::object info = classifier.info();
  const auto* task = info.if_contains("task");
  return task != nullptr && task->is_string() ? std::string(task->get_string()) : std::string();
}

}  // namespace

std::vector<std::string> task_names(const Classifier& classifier) {
  std::vector<std::string> out;
  if (auto own = own_task(classifier); !own.empty()) out.push_back(std::move(own));
  for (const auto& [name, c] : classifier.tasks()) out.push_back(name);
  return out;
}

std::shared_ptr<const Classifier> find_task(const std::shared_ptr<const Classifier>& classifier,
                                            std::string_view task) {
  if (!classifier || task.empty()) return nullptr;
  if (own_task(*classifier) == task) return classifier;
  for (const auto& [name, c] : classifier->tasks())
    if (name == task) return c;
  return nullptr;
}

ForwardingClassifier::ForwardingClassifier(std::shared_ptr<const Classifier> inner,
                                           const char* wrapper)
    : inner_(std::move(inner)) {
  if (!inner_) throw std::invalid_argument(std::string(wrapper) + ": no inner classifier");
}

}  // namespace mcpclass::classify
