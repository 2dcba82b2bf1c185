// Classifier's default answers to a sentence pair and a reranking (classifier.hpp).
#include "mcpclass/classify/classifier.hpp"

#include "mcpclass/classify/errors.hpp"

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

}  // namespace mcpclass::classify
