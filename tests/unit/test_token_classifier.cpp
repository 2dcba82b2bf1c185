// The native BERT token classifier against tests/transformers/make_token_fixtures.py: the stride
// windows its tokenizer makes, per-token logits of the reference model, batches of mixed
// lengths, and the spans of every aggregation strategy of the transformers pipeline.
#include "mcpclass/learned/token_classifier.hpp"

#ifdef MCPCLASS_WITH_LEARNED

#include "learned/bert_model.hpp"
#include "learned/bert_token_model.hpp"
#include "mcpclass/classify/errors.hpp"
#include "mcpclass/learned/text_tokenizer.hpp"
#include "transformer_fixtures.hpp"

#include <doctest/doctest.h>

#include <cmath>

using namespace mcpclass::learned;
using namespace mcpclass::learned::detail;
using mcpclass::classify::ClassifyError;
using mcpclass::classify::ConfigError;
namespace json = boost::json;

namespace {

json::object token_reference() {
  return json::parse(transformer_test::read_file(transformer_test::fixture("token_reference.json")))
      .as_object();
}

std::string dir() {
  return transformer_test::fixture("bert-token-f32");
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

std::unique_ptr<TextTokenizer> fixture_tokenizer(const json::object& ref) {
  TokenizerOptions options;
  options.max_length = static_cast<std::size_t>(ref.at("max_length").as_int64());
  options.stride = static_cast<std::size_t>(ref.at("stride").as_int64());
  return open_text_tokenizer(dir() + "/tokenizer.json", options);
}

}  // namespace

TEST_CASE("transformers.token.windows_and_logits_match_the_reference") {
  const auto ref = token_reference();
  const auto tokenizer = fixture_tokenizer(ref);
  const BertTokenModel model(dir());
  CHECK(model.config().labels.size() == 9);
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
    const auto logits = model.logits(inputs, 1);
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
          worst =
              std::max(worst, std::abs(logits[i][k * row.size() + j] - row[j].to_number<double>()));
      }
    }
  }
  MESSAGE(windows << " windows: max |logit − reference| = " << worst);
  CHECK(windows >= 10);
  CHECK(worst <= 1e-4);
}

TEST_CASE("transformers.token.mixed_batch_equals_one_by_one") {
  const auto ref = token_reference();
  const auto tokenizer = fixture_tokenizer(ref);
  const BertTokenModel model(dir());
  std::vector<TokenizedText> all;
  for (const auto& item : ref.at("texts").as_array())
    for (auto& w : windows_of(*tokenizer, std::string(item.at("text").as_string())))
      all.push_back(std::move(w));
  std::vector<BertInput> inputs;
  for (const auto& w : all) inputs.push_back({w.ids, w.type_ids});
  // Bit for bit at each thread count. (Across thread counts only the first token's row came
  // out bit-exact here, which is all the sequence head reads: oneDNN's sgemm may sum a block's
  // other rows in another order on more threads.)
  for (const std::size_t threads : {1, 2}) {
    CAPTURE(threads);
    const auto batch = model.logits(inputs, threads);
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      CAPTURE(i);
      CHECK(model.logits(std::span(&inputs[i], 1), threads).front() == batch[i]);
    }
  }
}

TEST_CASE("transformers.token.spans_match_the_pipeline_for_every_strategy") {
  const auto ref = token_reference();
  TokenClassifierSettings settings;
  settings.model = dir();
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
  MESSAGE(spans << " spans (" << multi_token
                << " of several tokens): max |score − reference| = " << worst);
  CHECK(spans >= 400);
  CHECK(multi_token >= 50);
  CHECK(worst <= 1e-4);
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
}

TEST_CASE("transformers.token.a_checkpoint_of_the_other_head_is_refused") {
  CHECK_THROWS_WITH_AS(BertTokenModel(transformer_test::fixture("bert-f32")),
                       doctest::Contains("is a sequence classifier; this needs a token classifier"),
                       ClassifyError);
  CHECK_THROWS_WITH_AS(BertSequenceModel{dir()},
                       doctest::Contains("is a token classifier; this needs a sequence classifier"),
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
