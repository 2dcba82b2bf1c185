// Sentence pairs through kind transformer (issue 48) against the PyTorch reference of
// tests/transformers/make_pair_fixtures.py: the pair template's ids and token types (an
// independent WordPiece and truncation in Python), the logits of BERT (two token types) and
// DeBERTa-v3 / -v2, the classifier's classify_pairs behind the default batching, and the
// refusal of a classifier that classifies one text.
#include "mcpclass/learned/learned_classifier.hpp"

#ifdef MCPCLASS_WITH_LEARNED

#include "architectures/common/sequence_model.hpp"
#include "mcpclass/classify/errors.hpp"
#include "mcpclass/config/config.hpp"
#include "transformer_fixtures.hpp"

#include <doctest/doctest.h>

#include <cmath>

using namespace mcpclass;
using namespace mcpclass::architectures;
namespace json = boost::json;
namespace tt = transformer_test;

namespace {

constexpr const char* kReference = "pair-reference.json";
const std::pair<const char*, const char*> kModels[] = {
    {"bert", "bert-f32"}, {"deberta-v3", "deberta-v3-f32"}, {"deberta-v2", "deberta-v2-f32"}};

std::vector<std::pair<std::string, std::string>> reference_pairs() {
  std::vector<std::pair<std::string, std::string>> out;
  const auto ref = tt::reference(kReference);
  for (const auto& p : ref.at("pairs").as_array())
    out.emplace_back(p.as_array()[0].as_string(), p.as_array()[1].as_string());
  return out;
}

}  // namespace

TEST_CASE("transformers.pairs: ids, token types and logits of sentence pairs match the reference") {
  const auto pairs = reference_pairs();
  const auto ref = tt::reference(kReference);
  for (const auto& [model_name, fixture] : kModels) {
    const std::string name = model_name;
    CAPTURE(name);
    const auto& m = ref.at("models").at(name).as_object();
    const auto dir = tt::fixture(fixture);
    const auto model = open_sequence_model(dir);
    tokenizers::TokenizerOptions options;
    options.max_length = model->max_tokens();
    const auto tokenizer = tokenizers::open_text_tokenizer(dir + "/tokenizer.json", options);
    std::vector<tokenizers::TokenizedText> encoded;
    for (const auto& [a, b] : pairs) encoded.push_back(tokenizer->encode_pair(a, b));
    std::vector<BertInput> inputs;
    for (std::size_t i = 0; i < encoded.size(); ++i) {
      CAPTURE(i);
      std::vector<std::int32_t> want_ids;
      for (const auto& v : m.at("ids").as_array()[i].as_array())
        want_ids.push_back(static_cast<std::int32_t>(v.to_number<int>()));
      std::vector<std::uint32_t> want_types;
      for (const auto& v : m.at("type_ids").as_array()[i].as_array())
        want_types.push_back(v.to_number<std::uint32_t>());
      CHECK(encoded[i].ids == want_ids);
      CHECK(encoded[i].type_ids == want_types);
      inputs.push_back({encoded[i].ids, encoded[i].type_ids});
    }
    const double gap = tt::max_abs_difference(model->logits(inputs, 1), tt::reference_logits(m));
    MESSAGE(name << " pairs: max |logit − reference| = " << gap);
    CHECK(gap <= 1e-4);
  }
}

TEST_CASE("transformers.pairs: kind transformer classifies pairs behind its batching") {
  const auto pairs = reference_pairs();
  const auto ref = tt::reference(kReference);
  const auto logits = tt::reference_logits(ref.at("models").at("bert").as_object());
  const auto config = config::config_from_json(json::parse(
      R"({"classifier": {"kind": "transformer", "model": ")" + tt::fixture("bert-f32") + R"("}})"));
  const auto classifier = config::make_classifier(config);
  REQUIRE(classifier->takes_pairs());
  std::vector<classify::TextPair> views;
  for (const auto& [a, b] : pairs) views.push_back({a, b});
  const auto answers = classifier->classify_pairs(views, {true});
  REQUIRE(answers.size() == pairs.size());
  for (std::size_t i = 0; i < answers.size(); ++i) {
    CAPTURE(i);
    const auto want = tt::softmax(std::span(logits.data() + i * 3, 3));
    for (std::size_t j = 0; j < 3; ++j)
      CHECK(std::abs(answers[i].probabilities[j] - want[j]) < 1e-4);
  }
  // A pair is not its first text alone: the second changes the answer.
  const auto alone = classifier->classify(pairs[3].first, {true});
  CHECK(alone.probabilities != answers[3].probabilities);
}

TEST_CASE("transformers.pairs: a classifier of one text refuses a pair, naming its kind") {
  const auto classifier = config::make_classifier(config::default_config());
  CHECK_FALSE(classifier->takes_pairs());
  const classify::TextPair pair{"a premise", "a hypothesis"};
  CHECK_THROWS_WITH_AS(classifier->classify_pairs(std::span(&pair, 1), {}),
                       doctest::Contains("the rules classifier classifies one text"),
                       classify::ClassifyError);
}

#endif  // MCPCLASS_WITH_LEARNED
