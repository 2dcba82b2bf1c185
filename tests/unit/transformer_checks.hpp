// Shared checks of the sequence-classifier tests of every architecture: a batch against its
// texts one by one, and `kind: transformer` against a fixture's PyTorch reference.
#pragma once

#include "mcpclass/config/config.hpp"
#include "transformer_fixtures.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <span>
#include <string>

namespace transformer_test {

/// Each text of `batch` (run_reference_texts) alone gives its batch logits bit for bit, also on
/// two threads (the batch ran on one).
template <class Model>
void check_batch_equals_one_by_one(const Model& model, const Run& batch, std::size_t labels) {
  for (const std::size_t threads : {1, 2}) {
    CAPTURE(threads);
    for (std::size_t i = 0; i < batch.ids.size(); ++i) {
      const mcpclass::architectures::BertInput one{batch.ids[i], {}};
      const auto single = model.logits(std::span(&one, 1), threads);
      for (std::size_t j = 0; j < single.size(); ++j)
        CHECK(single[j] == batch.logits[i * labels + j]);
    }
  }
}

/// `kind: transformer` over fixture `name` reports `architecture` and answers three texts of
/// `reference_file` with the softmax of model `key`'s reference logits (3 labels), within 1e-4.
inline void check_classifier_matches_reference(const std::string& name,
                                               const std::string& reference_file,
                                               const std::string& key,
                                               const std::string& architecture) {
  namespace json = boost::json;
  const auto config = mcpclass::config::config_from_json(json::parse(
      R"({"classifier": {"kind": "transformer", "model": ")" + fixture(name) + R"("}})"));
  const auto classifier = mcpclass::config::make_classifier(config);
  CHECK(classifier->info().at("architecture").as_string() == architecture);
  const auto ref = reference(reference_file);
  const auto logits = reference_logits(ref.at("models").at(key).as_object());
  for (const std::size_t i : {1, 5, 19}) {
    const std::string text(ref.at("texts").as_array()[i].as_string());
    CAPTURE(text);
    const auto answer = classifier->classify(text, {});
    const auto want = softmax(std::span(logits.data() + i * 3, 3));
    REQUIRE(answer.probabilities.size() == 3);
    for (std::size_t j = 0; j < 3; ++j) CHECK(std::abs(answer.probabilities[j] - want[j]) < 1e-4);
  }
}

}  // namespace transformer_test
