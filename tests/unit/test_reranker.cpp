// Cross-encoder reranking (issue 48) against the PyTorch reference of
// tests/transformers/make_pair_fixtures.py: bert-reranker/, a 1-label BERT with the config.json
// sentence-transformers' CrossEncoder publishes, scored for two queries against every text
// (logits and CrossEncoder.predict's sigmoid scores); service::rerank()'s order, top_n and
// refusals; the activations a config may name; what a reranker refuses.
#include "mcpclass/learned/learned_classifier.hpp"

#ifdef MCPCLASS_WITH_LEARNED

#include "mcpclass/classify/errors.hpp"
#include "mcpclass/config/config.hpp"
#include "mcpclass/service/reranking.hpp"
#include "transformer_fixtures.hpp"

#include <doctest/doctest.h>

#include <cmath>

using namespace mcpclass;
namespace json = boost::json;
namespace tt = transformer_test;

namespace {

std::shared_ptr<const classify::Classifier> reranker(const std::string& dir,
                                                     const std::string& extra = "") {
  return config::make_classifier(config::config_from_json(json::parse(
      R"({"classifier": {"kind": "transformer", "model": ")" + dir + "\"" + extra + "}}")));
}

std::vector<std::string> documents(const json::object& ref) {
  std::vector<std::string> out;
  for (const auto& d : ref.at("documents").as_array()) out.emplace_back(d.as_string());
  return out;
}

std::string load_error(const std::string& dir) {
  try {
    reranker(dir);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(loaded)";
}

}  // namespace

TEST_CASE("transformers.reranker: a 1-label cross-encoder scores passages as the reference") {
  const auto ref = tt::reference("pair-reference.json");
  const auto& r = ref.at("reranker").as_object();
  const auto texts = documents(r);
  const std::vector<std::string_view> views(texts.begin(), texts.end());
  for (const char* precision : {"f32", "int8", "bf16"}) {
    const std::string p = precision;
    CAPTURE(p);
    std::shared_ptr<const classify::Classifier> classifier;
    try {
      classifier = reranker(tt::fixture("bert-reranker"), R"(, "precision": ")" + p + "\"");
    } catch (const classify::ClassifyError& e) {
      // bf16 needs AVX-512 BF16: refused by name on a CPU (or a kernel set capped) without it.
      REQUIRE(p == "bf16");
      CHECK(std::string(e.what()).find("precision bf16 needs") != std::string::npos);
      continue;
    }
    REQUIRE(classifier->reranks());
    CHECK(classifier->info().at("reranker").at("activation") == "sigmoid");
    // Random weights of logits spread over units make int8's rounding show (its logits within
    // 0.37 here, where the trained model of bench/precision-accuracy keeps 99% of argmaxes).
    const double tolerance = p == "f32" ? 1e-4 : p == "int8" ? 0.1 : 0.02;
    double worst = 0;
    for (const auto& q : r.at("queries").as_array()) {
      const auto& query = q.as_object();
      const auto scores = classifier->rerank(query.at("query").as_string(), views, {});
      REQUIRE(scores.size() == texts.size());
      for (std::size_t i = 0; i < scores.size(); ++i) {
        const double logit = query.at("logits").as_array()[i].to_number<double>();
        const double score = query.at("scores").as_array()[i].to_number<double>();
        worst = std::max(worst, std::abs(scores[i].logit - logit));
        CHECK(std::abs(scores[i].score - score) <= tolerance);
        CHECK(std::abs(scores[i].score - 1.0 / (1.0 + std::exp(-scores[i].logit))) < 1e-12);
      }
    }
    MESSAGE(p << " reranker: max |logit − reference| = " << worst);
    if (p == "f32") CHECK(worst <= 1e-4);
  }
}

TEST_CASE(
    "transformers.reranker: service::rerank orders by score, keeps top_n, refuses bad input") {
  const auto ref = tt::reference("pair-reference.json");
  const auto& r = ref.at("reranker").as_object();
  const auto& q = r.at("queries").as_array()[1].as_object();
  const auto texts = documents(r);
  const auto classifier = reranker(tt::fixture("bert-reranker"));
  service::RerankRequest request;
  request.query = q.at("query").as_string();
  for (std::size_t i = 1; i < texts.size(); ++i) request.documents.push_back(texts[i]);
  const auto ranked = service::rerank(*classifier, request);
  REQUIRE(ranked.size() == request.documents.size());
  for (std::size_t i = 0; i < ranked.size(); ++i) {
    const double want = q.at("scores").as_array()[ranked[i].index + 1].to_number<double>();
    CHECK(std::abs(ranked[i].score.score - want) < 1e-4);
    if (i > 0) CHECK(ranked[i - 1].score.logit >= ranked[i].score.logit);
  }
  request.top_n = 3;
  const auto top = service::rerank(*classifier, request);
  REQUIRE(top.size() == 3);
  for (std::size_t i = 0; i < 3; ++i) CHECK(top[i].index == ranked[i].index);
  const auto body = service::rerank_results(top, request, true);
  CHECK(body.at("results").as_array()[0].at("document").at("text").as_string() ==
        request.documents[top[0].index]);

  auto refused = [&](service::RerankRequest bad, const service::RerankLimits& limits = {}) {
    try {
      service::rerank(*classifier, bad, limits);
    } catch (const service::RerankRequestError& e) {
      return std::pair<std::string, bool>(e.what(), e.too_many());
    }
    return std::pair<std::string, bool>("(ranked)", false);
  };
  auto bad = request;
  bad.documents.clear();
  CHECK(refused(bad).first == "documents must not be empty");
  bad = request;
  bad.top_n = 0;
  CHECK(refused(bad).first == "top_n must be at least 1");
  bad = request;
  bad.query = "  ";
  CHECK(refused(bad).first == "query: text must not be empty");
  bad = request;
  bad.documents[2] = "\xff";
  CHECK(refused(bad).first == "documents[2]: text is not valid UTF-8");
  bad = request;
  const std::string long_text(61, 'x');  // the query has 50 characters
  bad.documents[4] = long_text;
  CHECK(refused(bad, {60, 128}).first ==
        "documents[4]: text is 61 characters long; the limit is 60");
  const auto many = refused(request, {100, 4});
  CHECK(many.second);
  CHECK(many.first.find("documents has 19 passages; the limit is 4") == 0);
}

TEST_CASE("transformers.reranker: a reranker refuses to classify, a classifier to rerank") {
  const auto classifier = reranker(tt::fixture("bert-reranker"));
  CHECK_THROWS_WITH_AS(classifier->classify("a query"), doctest::Contains("is a reranker"),
                       classify::ClassifyError);
  const classify::TextPair pair{"a query", "a passage"};
  CHECK_THROWS_WITH_AS(classifier->classify_pairs(std::span(&pair, 1), {}),
                       doctest::Contains("is a reranker"), classify::ClassifyError);
  const auto three = reranker(tt::fixture("bert-f32"));
  CHECK_FALSE(three->reranks());
  const std::string_view passage = "a passage";
  CHECK_THROWS_WITH_AS(three->rerank("a query", std::span(&passage, 1), {}),
                       doctest::Contains("the transformer classifier does not rerank"),
                       classify::ClassifyError);
  const auto rules = config::make_classifier(config::default_config());
  CHECK_THROWS_WITH_AS(service::rerank(*rules, {"a query", {passage}, {}}),
                       doctest::Contains("the rules classifier does not rerank"),
                       classify::ClassifyError);
}

TEST_CASE("transformers.reranker: the activation config.json names, and 1-label heads refused") {
  const auto ref = tt::reference("pair-reference.json");
  const auto& q = ref.at("reranker").at("queries").as_array()[0].as_object();
  const std::string query(q.at("query").as_string());
  const std::string_view passage = "write a python function to sort a list";
  const double logit = q.at("logits").as_array()[3].to_number<double>();
  const auto dir = tt::copy_of("bert-reranker", "reranker-activation");
  auto c = json::parse(tt::read_file(dir + "/config.json")).as_object();
  c.erase("sentence_transformers");
  c["sbert_ce_default_activation_function"] = "torch.nn.modules.linear.Identity";
  tt::write_file(dir + "/config.json", json::serialize(c));
  auto score = reranker(dir)->rerank(query, std::span(&passage, 1), {}).front();
  CHECK(std::abs(score.score - logit) < 1e-4);
  CHECK(score.score == score.logit);
  c["sentence_transformers"] = json::object{{"activation_fn", "torch.nn.modules.activation.Tanh"}};
  tt::write_file(dir + "/config.json", json::serialize(c));
  score = reranker(dir)->rerank(query, std::span(&passage, 1), {}).front();
  CHECK(std::abs(score.score - std::tanh(logit)) < 1e-4);
  c["sentence_transformers"] = json::object{{"activation_fn", "torch.nn.modules.activation.GELU"}};
  tt::write_file(dir + "/config.json", json::serialize(c));
  CHECK(load_error(dir).find("sentence_transformers.activation_fn "
                             "'torch.nn.modules.activation.GELU' is not supported") !=
        std::string::npos);
  c.erase("sentence_transformers");
  c.erase("sbert_ce_default_activation_function");
  c["problem_type"] = "single_label_classification";
  tt::write_file(dir + "/config.json", json::serialize(c));
  CHECK(load_error(dir).find("problem_type 'single_label_classification' needs at least 2 "
                             "labels (1 label is a score: regression)") != std::string::npos);
  c["problem_type"] = "regression";
  tt::write_file(dir + "/config.json", json::serialize(c));
  CHECK(reranker(dir)->reranks());  // without a named activation: CrossEncoder's sigmoid
  std::filesystem::remove_all(dir);
}

#endif  // MCPCLASS_WITH_LEARNED
