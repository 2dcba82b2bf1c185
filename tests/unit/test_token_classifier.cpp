// The native token classifiers (BERT, RoBERTa, ModernBERT, mmBERT with YaRN) against
// tests/transformers/make_token_fixtures.py: the stride windows the tokenizer makes, per-token
// logits of the reference models, batches of mixed lengths, the spans of every aggregation
// strategy of the transformers pipeline, and config.json's architecture picking the model.
#include "mcpclass/learned/token_classifier.hpp"

#ifdef MCPCLASS_WITH_LEARNED

#include "architectures/bert/bert_model.hpp"
#include "architectures/bert/bert_token_model.hpp"
#include "architectures/common/sequence_model.hpp"
#include "architectures/common/token_model.hpp"
#include "architectures/modernbert/modernbert_model.hpp"
#include "architectures/modernbert/modernbert_token_model.hpp"
#include "mcpclass/classify/errors.hpp"
#include "mcpclass/tokenizers/text_tokenizer.hpp"
#include "transformer_fixtures.hpp"

#include <doctest/doctest.h>

#include <cmath>

using namespace mcpclass::learned;
using namespace mcpclass::kernels;
using namespace mcpclass::tokenizers;
using namespace mcpclass::architectures;
using mcpclass::classify::ClassifyError;
using mcpclass::classify::ConfigError;
namespace json = boost::json;

namespace {

// A token-classification fixture and its reference (make_token_fixtures.py).
struct Fixture {
  const char* dir;
  const char* reference;
};
constexpr Fixture kFixtures[] = {
    {"bert-token-f32", "token_reference.json"},
    {"roberta-token-f32", "roberta-token-reference.json"},
    {"modernbert-token-f32", "modernbert-token-reference.json"},
    {"mmbert-token-f32", "mmbert-token-reference.json"},
};

json::object token_reference(const Fixture& f = kFixtures[0]) {
  return json::parse(transformer_test::read_file(transformer_test::fixture(f.reference)))
      .as_object();
}

std::string dir(const Fixture& f = kFixtures[0]) {
  return transformer_test::fixture(f.dir);
}

// Code points before byte `b` of `text`.
std::size_t code_point_at(const std::string& text, std::size_t b) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < b; ++i) n += (static_cast<unsigned char>(text[i]) & 0xC0) != 0x80;
  return n;
}

// The windows of `text` as the fixture's tokenizer cuts them (max_length 64, stride 16).
std::vector<TokenizedText> windows_of(const TextTokenizer& tokenizer, const std::string& text) {
  auto first = tokenizer.encode(text);
  std::vector<TokenizedText> out{first};
  for (auto& w : first.overflowing) out.push_back(std::move(w));
  out.front().overflowing.clear();
  return out;
}

std::unique_ptr<TextTokenizer> fixture_tokenizer(const Fixture& f, const json::object& ref) {
  TokenizerOptions options;
  options.max_length = static_cast<std::size_t>(ref.at("max_length").as_int64());
  options.stride = static_cast<std::size_t>(ref.at("stride").as_int64());
  return open_text_tokenizer(dir(f) + "/tokenizer.json", options);
}

}  // namespace

TEST_CASE("transformers.token.windows_and_logits_match_the_reference") {
  for (const auto& f : kFixtures) {
    CAPTURE(std::string(f.dir));
    const auto ref = token_reference(f);
    const auto tokenizer = fixture_tokenizer(f, ref);
    const auto model = open_token_model(dir(f));
    CHECK(model->labels().size() == 9);
    double worst = 0.0;
    std::size_t windows = 0;
    for (const auto& item : ref.at("texts").as_array()) {
      const auto& t = item.as_object();
      const std::string text(t.at("text").as_string());
      CAPTURE(text);
      const auto got = windows_of(*tokenizer, text);
      const auto& want = t.at("windows").as_array();
      REQUIRE(got.size() == want.size());
      std::vector<BertInput> inputs;
      for (const auto& w : got) inputs.push_back({w.ids, w.type_ids});
      const auto logits = model->logits(inputs, 1);
      for (std::size_t i = 0; i < got.size(); ++i, ++windows) {
        const auto& w = want[i].as_object();
        REQUIRE(got[i].ids.size() == w.at("ids").as_array().size());
        for (std::size_t k = 0; k < got[i].ids.size(); ++k) {
          CHECK(got[i].ids[k] == w.at("ids").as_array()[k].as_int64());
          const auto& off = w.at("offsets").as_array()[k].as_array();
          CHECK(code_point_at(text, got[i].offsets[k].first) == off[0].as_int64());
          CHECK(code_point_at(text, got[i].offsets[k].second) == off[1].as_int64());
          const auto& row = w.at("logits").as_array()[k].as_array();
          for (std::size_t j = 0; j < row.size(); ++j)
            worst = std::max(worst,
                             std::abs(logits[i][k * row.size() + j] - row[j].to_number<double>()));
        }
      }
    }
    MESSAGE(std::string(f.dir) << ": " << windows
                               << " windows: max |logit − reference| = " << worst);
    CHECK(windows >= 10);
    CHECK(worst <= 1e-4);
  }
}

TEST_CASE("transformers.token.modernbert_windows_are_longer_than_the_local_attention") {
  // Both kinds of layer shape the reference logits above: global ones and sliding windows
  // that cut every text.
  for (const char* name : {"modernbert-token-f32", "mmbert-token-f32"}) {
    CAPTURE(std::string(name));
    const ModernBertTokenModel model(transformer_test::fixture(name));
    const auto& c = model.config();
    CHECK(std::count(c.global_layer.begin(), c.global_layer.end(), true) >= 1);
    CHECK(std::count(c.global_layer.begin(), c.global_layer.end(), false) >= 1);
    CHECK(c.local_attention / 2 + 1 < 20);  // the shortest text has 20 tokens or more
  }
  CHECK(ModernBertTokenModel(transformer_test::fixture("mmbert-token-f32"))
            .config()
            .global_rope.type == RopeSettings::Type::yarn);
}

TEST_CASE("transformers.token.mixed_batch_equals_one_by_one") {
  for (const auto& f : kFixtures) {
    CAPTURE(std::string(f.dir));
    const auto ref = token_reference(f);
    const auto tokenizer = fixture_tokenizer(f, ref);
    const auto model = open_token_model(dir(f));
    std::vector<TokenizedText> all;
    for (const auto& item : ref.at("texts").as_array())
      for (auto& w : windows_of(*tokenizer, std::string(item.at("text").as_string())))
        all.push_back(std::move(w));
    std::vector<BertInput> inputs;
    for (const auto& w : all) inputs.push_back({w.ids, w.type_ids});
    // Bit for bit at each thread count. (Across thread counts only the first token's row came
    // out bit-exact here, which is all the sequence head reads: oneDNN's sgemm may sum a
    // block's other rows in another order on more threads.)
    for (const std::size_t threads : {1, 2}) {
      CAPTURE(threads);
      const auto batch = model->logits(inputs, threads);
      for (std::size_t i = 0; i < inputs.size(); ++i) {
        CAPTURE(i);
        CHECK(model->logits(std::span(&inputs[i], 1), threads).front() == batch[i]);
      }
    }
  }
}

TEST_CASE("transformers.token.spans_match_the_pipeline_for_every_strategy") {
  for (const auto& f : kFixtures) {
    CAPTURE(std::string(f.dir));
    const auto ref = token_reference(f);
    TokenClassifierSettings settings;
    settings.model = dir(f);
    settings.stride = static_cast<std::size_t>(ref.at("stride").as_int64());
    const auto classifier = make_token_classifier(settings);
    std::size_t spans = 0, multi_token = 0;
    double worst = 0.0;
    for (const auto& item : ref.at("texts").as_array()) {
      const auto& t = item.as_object();
      const std::string text(t.at("text").as_string());
      for (const auto& [name, expected] : t.at("spans").as_object()) {
        const auto strategy = parse_token_aggregation(name);
        REQUIRE(strategy.has_value());
        CAPTURE(text);
        CAPTURE(std::string(name));
        const auto got = classifier->detect(text, *strategy);
        const auto& want = expected.as_array();
        REQUIRE(got.size() == want.size());
        for (std::size_t i = 0; i < got.size(); ++i) {
          const auto& w = want[i].as_object();
          const auto& g = got[i];
          CHECK(g.label ==
                (*strategy == TokenAggregation::none ? w.at("entity") : w.at("entity_group"))
                    .as_string());
          CHECK(g.word == w.at("word").as_string());
          CHECK(g.start == static_cast<std::size_t>(w.at("start").as_int64()));
          CHECK(g.end == static_cast<std::size_t>(w.at("end").as_int64()));
          CHECK(code_point_at(text, g.byte_start) == g.start);
          CHECK(code_point_at(text, g.byte_end) == g.end);
          if (*strategy == TokenAggregation::none)
            CHECK(g.index == static_cast<std::size_t>(w.at("index").as_int64()));
          worst = std::max(worst, std::abs(g.score - w.at("score").to_number<double>()));
          ++spans;
          multi_token +=
              g.word.find(' ') != std::string::npos || g.word.size() < g.byte_end - g.byte_start;
        }
      }
    }
    MESSAGE(std::string(f.dir) << ": " << spans << " spans (" << multi_token
                               << " of several tokens): max |score − reference| = " << worst);
    CHECK(spans >= 400);
    CHECK(multi_token >= 50);
    CHECK(worst <= 1e-4);
  }
}

TEST_CASE("transformers.token.the_configured_strategy_and_ignore_labels_apply") {
  TokenClassifierSettings settings;
  settings.model = dir();
  settings.aggregation = TokenAggregation::first;
  const auto first = make_token_classifier(settings);
  const std::string text = "My name is John Smith and my email is john.smith@example.com";
  const auto spans = first->detect(text);
  CHECK(first->detect(text, TokenAggregation::first).size() == spans.size());
  REQUIRE(!spans.empty());
  settings.ignore_labels = {"O", spans.front().label};
  const auto fewer = make_token_classifier(settings)->detect(text);
  CHECK(fewer.size() < spans.size());
  for (const auto& s : fewer) CHECK(s.label != spans.front().label);
  CHECK(first->info().at("architecture") == "BertForTokenClassification");
  settings.model = dir(kFixtures[2]);
  CHECK(make_token_classifier(settings)->info().at("architecture") ==
        "ModernBertForTokenClassification");
}

TEST_CASE("transformers.token.a_checkpoint_of_the_other_head_is_refused") {
  CHECK_THROWS_WITH_AS(BertTokenModel(transformer_test::fixture("bert-f32")),
                       doctest::Contains("is a sequence classifier; this needs a token classifier"),
                       ClassifyError);
  CHECK_THROWS_WITH_AS(BertSequenceModel{dir()},
                       doctest::Contains("is a token classifier; this needs a sequence classifier"),
                       ClassifyError);
  CHECK_THROWS_WITH_AS(ModernBertTokenModel(transformer_test::fixture("modernbert-f32")),
                       doctest::Contains("is a sequence classifier; this needs a token classifier"),
                       ClassifyError);
  CHECK_THROWS_WITH_AS(ModernBertModel(transformer_test::fixture("modernbert-token-f32")),
                       doctest::Contains("is a token classifier; this needs a sequence classifier"),
                       ClassifyError);
  CHECK_THROWS_WITH_AS(open_sequence_model(transformer_test::fixture("modernbert-token-f32")),
                       doctest::Contains("architecture 'ModernBertForTokenClassification' is a "
                                         "token classifier; this needs a sequence classifier"),
                       ClassifyError);
  TokenClassifierSettings settings;
  settings.model = transformer_test::fixture("modernbert-f32");
  CHECK_THROWS_WITH_AS(make_token_classifier(settings),
                       doctest::Contains("architecture 'ModernBertForSequenceClassification' is a "
                                         "sequence classifier; this needs a token classifier"),
                       ClassifyError);
}

TEST_CASE("transformers.token.an_unsupported_architecture_is_a_load_error_naming_the_file") {
  const auto copy = transformer_test::copy_of("modernbert-token-f32", "token-arch");
  transformer_test::set_config(copy, "architectures", json::array{"ElectraForTokenClassification"});
  TokenClassifierSettings settings;
  settings.model = copy;
  const std::string want = copy +
                           "/config.json': architecture 'ElectraForTokenClassification' is "
                           "not a supported token classifier (BertForTokenClassification, "
                           "RobertaForTokenClassification, XLMRobertaForTokenClassification, "
                           "ModernBertForTokenClassification, DebertaV2ForTokenClassification)";
  CHECK_THROWS_WITH_AS(make_token_classifier(settings), doctest::Contains(want.c_str()),
                       ClassifyError);
}

TEST_CASE("transformers.token.a_modernbert_tensor_the_config_does_not_account_for_is_refused") {
  const auto copy = transformer_test::copy_of("mmbert-token-f32", "token-bias");
  transformer_test::set_config(copy, "classifier_bias", false);
  CHECK_THROWS_WITH_AS(ModernBertTokenModel{copy},
                       doctest::Contains("tensor 'head.dense.bias' is not part of a "
                                         "ModernBertForTokenClassification"),
                       ClassifyError);
}

TEST_CASE("transformers.token.settings_are_checked_strictly") {
  const auto parse = [](const char* text) {
    return TokenClassifierSettings::from_json(json::parse(text));
  };
  const auto s = parse(R"({"model": "m", "aggregation": "max", "stride": 8, "tool": "find_pii"})");
  CHECK(s.aggregation == TokenAggregation::max);
  CHECK(s.stride == 8);
  CHECK(TokenClassifierSettings::from_json(s.to_json()).to_json() == s.to_json());
  CHECK_THROWS_WITH_AS(parse(R"({"model": "m", "aggregation": "mean"})"),
                       doctest::Contains("token_classifier.aggregation"), ConfigError);
  CHECK_THROWS_WITH_AS(parse(R"({"aggregation": "max"})"),
                       doctest::Contains("token_classifier.model"), ConfigError);
  CHECK_THROWS_WITH_AS(parse(R"({"model": "m", "strides": 3})"), doctest::Contains("strides"),
                       ConfigError);
}

#endif  // MCPCLASS_WITH_LEARNED
