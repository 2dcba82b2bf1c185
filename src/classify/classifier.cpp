// Classifier's default answer to a sentence pair (classifier.hpp).
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

}  // namespace mcpclass::classify
