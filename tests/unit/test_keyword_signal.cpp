// The keyword signal (routing.signals.keywords): each method and operator as the Semantic
// Router defines them, case sensitivity, configuration errors naming their key, hostile input.
#include "mcpclass/routing/keyword_signal.hpp"
#include "mcpclass/util/config_error.hpp"

#include <doctest/doctest.h>

#include <boost/json.hpp>

#include <random>
#include <string>
#include <vector>

using mcpclass::routing::KeywordSignal;
using mcpclass::routing::KeywordSignalResult;
using mcpclass::routing::KeywordSignalSettings;
using mcpclass::util::ConfigError;
namespace json = boost::json;

namespace {

const std::string kPath = "routing.signals.keywords[2]";

KeywordSignal signal(const std::string& document) {
  return KeywordSignal::from_json(json::parse(document), kPath);
}

KeywordSignalResult evaluate(const std::string& document, std::string_view text) {
  return signal(document).evaluate(text);
}

// The key path of the ConfigError that reading `document` throws ("" when none).
std::string error_path(const std::string& document) {
  try {
    signal(document);
  } catch (const ConfigError& e) {
    return e.path();
  }
  return "";
}

}  // namespace

TEST_CASE("keyword signal regex method finds literal words and phrases at word boundaries") {
  const std::string doc =
      R"({"name": "code", "operator": "OR", "keywords": ["debug", "unit test", "c++", "a.b"]})";
  CHECK(evaluate(doc, "please debug this").matched);
  CHECK(evaluate(doc, "Please DEBUG this").matched);
  CHECK_FALSE(evaluate(doc, "the debugger crashed").matched);
  CHECK(evaluate(doc, "write a unit test for it").keywords ==
        std::vector<std::string>{"unit test"});
  CHECK_FALSE(evaluate(doc, "write a unit   test").matched);
  // Literal, not a regular expression: '+' and '.' match themselves only.
  CHECK(evaluate(doc, "I like c++ a lot").keywords == std::vector<std::string>{"c++"});
  CHECK_FALSE(evaluate(doc, "I like ccc and axb").matched);
  const auto all = evaluate(doc, "a.b: unit test of c++ code to debug");
  CHECK(all.keywords == std::vector<std::string>{"debug", "unit test", "c++", "a.b"});
  CHECK(all.score == 1.0);
  CHECK(evaluate(doc, "nothing here").score == 0.0);
}

TEST_CASE("keyword signal regex method sets no word boundaries for Han keywords") {
  const std::string doc = R"({"name": "zh", "operator": "OR", "keywords": ["首先"]})";
  CHECK(evaluate(doc, "请首先安装").matched);
}

TEST_CASE("keyword signal operators AND OR NOR") {
  const std::string keywords = R"("keywords": ["alpha", "beta"]})";
  const std::string op_and = R"({"name": "k", "operator": "AND", )" + keywords;
  const std::string op_or = R"({"name": "k", "operator": "OR", )" + keywords;
  const std::string op_nor = R"({"name": "k", "operator": "NOR", )" + keywords;
  CHECK(evaluate(op_and, "alpha and beta").matched);
  CHECK_FALSE(evaluate(op_and, "alpha only").matched);
  CHECK(evaluate(op_and, "alpha only").keywords.empty());
  CHECK(evaluate(op_or, "beta only").keywords == std::vector<std::string>{"beta"});
  CHECK_FALSE(evaluate(op_or, "gamma").matched);
  const auto none = evaluate(op_nor, "gamma");
  CHECK(none.matched);
  CHECK(none.keywords.empty());
  CHECK_FALSE(evaluate(op_nor, "gamma and beta").matched);
}

TEST_CASE("keyword signal case_sensitive applies to every method") {
  for (const std::string method : {"regex", "pattern", "bm25", "ngram", "fuzzy"}) {
    CAPTURE(method);
    const std::string base = R"({"name": "k", "operator": "OR", "method": ")" + method +
                             R"(", "keywords": ["Kubernetes"], "case_sensitive": )";
    CHECK(evaluate(base + "true}", "deploy on Kubernetes today").matched);
    CHECK_FALSE(evaluate(base + "true}", "deploy on KUBERNETES today").matched);
    CHECK(evaluate(base + "false}", "deploy on KUBERNETES today").matched);
  }
}

TEST_CASE("keyword signal pattern method searches RE2 patterns") {
  const std::string doc =
      R"({"name": "ids", "operator": "OR", "method": "pattern", "keywords": ["\\bTKT-[0-9]{4}\\b", "(?i)urgent"]})";
  CHECK(evaluate(doc, "see tkt-1234").keywords == std::vector<std::string>{"\\bTKT-[0-9]{4}\\b"});
  CHECK_FALSE(evaluate(doc, "see TKT-12345").matched);
  CHECK(evaluate(doc, "URGENT please").matched);
}

TEST_CASE("keyword signal bm25 method scores keywords as documents with the text as query") {
  const std::string doc =
      R"({"name": "code", "operator": "OR", "method": "bm25", "keywords": ["code", "function", "debug"], "bm25_threshold": 0.5})";
  // N = 3 one-term documents: idf = ln(1 + 2.5/1.5), term weight 1 (length = avgdl).
  const auto r = evaluate(doc, "Please debug my code");
  CHECK(r.keywords == std::vector<std::string>{"code", "debug"});
  CHECK(r.score == doctest::Approx(0.98083).epsilon(1e-4));
  // Each occurrence in the query counts.
  CHECK(evaluate(doc, "code code").score == doctest::Approx(2 * 0.98083).epsilon(1e-4));
  // Stop words are no terms; no stemming.
  CHECK_FALSE(evaluate(doc, "the debugging of functions").matched);

  // A phrase keyword scores by its terms: one term of two reaches a threshold below half.
  const std::string phrase =
      R"({"name": "ml", "operator": "OR", "method": "bm25", "keywords": ["machine learning", "gradient"], "bm25_threshold": 0.1})";
  CHECK(evaluate(phrase, "I am learning to cook").keywords ==
        std::vector<std::string>{"machine learning"});
  CHECK_FALSE(evaluate(phrase, "I am cooking").matched);
}

TEST_CASE("keyword signal ngram method tolerates typos by n-gram similarity") {
  const std::string doc =
      R"({"name": "urgent", "operator": "OR", "method": "ngram", "keywords": ["urgent", "emergency"], "ngram_threshold": 0.4, "ngram_arity": 3})";
  // "  urgnt  " and "  urgent  ": 5 shared trigrams of 10 in all, (100 - 25) / 100.
  const auto r = evaluate(doc, "this is urgnt!");
  CHECK(r.keywords == std::vector<std::string>{"urgent"});
  CHECK(r.score == doctest::Approx(0.75));
  CHECK_FALSE(evaluate(doc, "this is important").matched);
  // A phrase keyword matches through the whole text.
  const std::string phrase =
      R"({"name": "p", "operator": "OR", "method": "ngram", "keywords": ["credit card"], "ngram_threshold": 0.8})";
  CHECK(evaluate(phrase, "credit card").matched);
}

TEST_CASE("keyword signal fuzzy method scores similarity in percent") {
  const std::string doc =
      R"({"name": "sensitive", "operator": "OR", "method": "fuzzy", "keywords": ["password", "credit card", "api key"], "fuzzy_match": true, "fuzzy_threshold": 82})";
  // Indel similarity: "pasword" vs "password" = 100 (1 - 1/15).
  const auto typo = evaluate(doc, "I forgot my pasword yesterday");
  CHECK(typo.keywords == std::vector<std::string>{"password"});
  CHECK(typo.score == doctest::Approx(1.0 - 1.0 / 15.0));
  CHECK_FALSE(evaluate(doc, "where is my passport").matched);
  CHECK(evaluate(doc, "my credit crad was stolen").keywords ==
        std::vector<std::string>{"credit card"});
  CHECK(evaluate(doc, "here is my apikey").keywords == std::vector<std::string>{"api key"});
  CHECK(evaluate(doc, "my password").score == 1.0);
  CHECK_FALSE(evaluate(doc, "a normal sentence about cooking").matched);
}

TEST_CASE("keyword signal regex method with fuzzy_match falls back to similarity") {
  const std::string base = R"({"name": "s", "operator": "AND", "keywords": ["password", "reset"])";
  CHECK_FALSE(evaluate(base + "}", "pasword reset").matched);
  CHECK(evaluate(base + R"(, "fuzzy_match": true, "fuzzy_threshold": 85})", "pasword reset")
            .keywords == std::vector<std::string>{"password", "reset"});
}

TEST_CASE("keyword signal settings round-trip through to_json") {
  for (
      const std::string doc :
      {R"({"name": "a", "operator": "NOR", "method": "regex", "keywords": ["x"], "case_sensitive": true})",
       R"({"name": "b", "operator": "OR", "method": "bm25", "keywords": ["x y"], "case_sensitive": false, "bm25_threshold": 0.25})",
       R"({"name": "c", "operator": "AND", "method": "ngram", "keywords": ["x"], "case_sensitive": false, "ngram_threshold": 0.5, "ngram_arity": 4})",
       R"({"name": "d", "operator": "OR", "method": "fuzzy", "keywords": ["x"], "case_sensitive": false, "fuzzy_match": true, "fuzzy_threshold": 82.0})",
       R"({"name": "e", "operator": "OR", "method": "pattern", "keywords": ["a+b"], "case_sensitive": false})"}) {
    CAPTURE(doc);
    const auto settings = KeywordSignalSettings::from_json(json::parse(doc), kPath);
    CHECK(json::value(settings.to_json()) == json::parse(doc));
    CHECK(json::value(KeywordSignalSettings::from_json(settings.to_json(), kPath).to_json()) ==
          json::value(settings.to_json()));
  }
  // The defaults: method regex, case-insensitive, the Router's thresholds.
  const auto d = KeywordSignalSettings::from_json(
      json::parse(R"({"name": "n", "operator": "OR", "method": "ngram", "keywords": ["x"]})"),
      kPath);
  CHECK(d.ngram_threshold == 0.4);
  CHECK(d.ngram_arity == 3);
  CHECK(KeywordSignalSettings::from_json(
            json::parse(R"({"name": "n", "operator": "OR", "keywords": ["x"]})"), kPath)
            .method == mcpclass::routing::KeywordMethod::regex);
}

TEST_CASE("keyword signal configuration errors name the key") {
  const std::string head = R"({"name": "k", "operator": "OR", )";
  CHECK(error_path(R"({"name": "k", "keywords": ["x"]})") == kPath + ".operator");
  CHECK(error_path(head + R"("operator": "XOR"})") == kPath + ".operator");
  CHECK(error_path(R"({"name": "k", "operator": "or", "keywords": ["x"]})") == kPath + ".operator");
  CHECK(error_path(head + R"("method": "semantic", "keywords": ["x"]})") == kPath + ".method");
  CHECK(error_path(head + R"("keywords": []})") == kPath + ".keywords");
  CHECK(error_path(head + R"("keywords": ["x", ""]})") == kPath + ".keywords[1]");
  CHECK(error_path(head + R"("keywords": ["x", 3]})") == kPath + ".keywords[1]");
  CHECK(error_path(head + R"("keywords": ["x"], "colour": 1})") == kPath + ".colour");
  // A bad regular expression, and one that would match every text.
  CHECK(error_path(head + R"("method": "pattern", "keywords": ["ok", "(unclosed"]})") ==
        kPath + ".keywords[1]");
  CHECK(error_path(head + R"("method": "pattern", "keywords": ["x*"]})") == kPath + ".keywords[0]");
  // Thresholds: out of range, or given to a method that does not read them.
  CHECK(error_path(head + R"("method": "bm25", "keywords": ["x"], "bm25_threshold": 0})") ==
        kPath + ".bm25_threshold");
  CHECK(error_path(head + R"("method": "ngram", "keywords": ["x"], "ngram_threshold": 1.5})") ==
        kPath + ".ngram_threshold");
  CHECK(error_path(head + R"("method": "ngram", "keywords": ["x"], "ngram_arity": 1})") ==
        kPath + ".ngram_arity");
  CHECK(error_path(head + R"("method": "ngram", "keywords": ["x"], "bm25_threshold": 0.2})") ==
        kPath + ".bm25_threshold");
  CHECK(error_path(head + R"("method": "fuzzy", "keywords": ["x"], "fuzzy_threshold": 2})") ==
        kPath + ".fuzzy_threshold");
  CHECK(error_path(head + R"("keywords": ["x"], "fuzzy_threshold": 90})") ==
        kPath + ".fuzzy_threshold");
  CHECK(error_path(head + R"("method": "fuzzy", "keywords": ["x"], "fuzzy_match": false})") ==
        kPath + ".fuzzy_match");
  CHECK(error_path(head + R"("method": "fuzzy", "keywords": ["x", "?!"]})") ==
        kPath + ".keywords[1]");
  CHECK(error_path(head + R"("method": "fuzzy", "keywords": [")" + std::string(80, 'a') +
                   R"("]})") == kPath + ".keywords[0]");
  // A bm25 keyword of stop words only could never score.
  CHECK(error_path(head + R"("method": "bm25", "keywords": ["code", "the of"]})") ==
        kPath + ".keywords[1]");
  try {
    signal(head + R"("method": "pattern", "keywords": ["(unclosed"]})");
    FAIL("no error");
  } catch (const ConfigError& e) {
    CHECK(std::string(e.what()).find("(unclosed") != std::string::npos);
  }
}

TEST_CASE("keyword signal takes a large hostile text in every method") {
  // 1 MiB of short words, punctuation and invalid UTF-8, with each keyword planted at the end.
  std::mt19937 rng(32);
  std::string text;
  const std::string alphabet = "abcdefghij \xff\xc3.,'-_";
  while (text.size() < (1u << 20)) text += alphabet[rng() % alphabet.size()];
  text += " final password reset token";
  for (const std::string method : {"regex", "pattern", "bm25", "ngram", "fuzzy"}) {
    CAPTURE(method);
    const auto r = evaluate(R"({"name": "k", "operator": "AND", "method": ")" + method +
                                R"(", "keywords": ["password reset", "token"]})",
                            text);
    CHECK(r.matched);
    CHECK(r.keywords.size() == 2);
  }
  // One 1 MiB word, and invalid UTF-8 alone.
  const std::string word(1u << 20, 'a');
  for (const std::string method : {"regex", "bm25", "ngram", "fuzzy"}) {
    CAPTURE(method);
    const std::string doc = R"({"name": "k", "operator": "OR", "method": ")" + method +
                            R"(", "keywords": ["aaaa", "zzz"]})";
    CHECK_NOTHROW(evaluate(doc, word));
    CHECK_FALSE(evaluate(doc, "\xff\xfe\xc3(\xe2\x28\xa1").matched);
  }
}

TEST_CASE("keyword signal regex method matches a keyword ending in a non-ASCII letter") {
  // The Router's \b after 'é' never matches (Go's \b is ASCII); here that side has no boundary.
  const std::string doc = R"({"name": "k", "operator": "OR", "keywords": ["café"]})";
  CHECK(evaluate(doc, "un café noir").matched);
  CHECK(evaluate(doc, "UN CAFÉ NOIR").matched);
  CHECK_FALSE(evaluate(doc, "uncafé").matched);
}
