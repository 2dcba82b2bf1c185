// The rule classifier: accuracy on the reference examples, fallback semantics, distribution
// invariants, determinism and hostile input.
#include "mcpclass/classify/classification.hpp"
#include "mcpclass/classify/errors.hpp"
#include "mcpclass/classify/rule_classifier.hpp"
#include "mcpclass/config/config.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <fstream>
#include <map>
#include <numeric>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

using namespace mcpclass::classify;
namespace config = mcpclass::config;

namespace {

struct Example {
  std::string category;
  std::string text;
};

// Minimal CSV: the file has a header and unquoted fields (a quoted field keeps its commas).
std::vector<std::string> split_csv_line(const std::string& line) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (c == '"') {
      if (quoted && i + 1 < line.size() && line[i + 1] == '"') {
        fields.back() += '"';
        ++i;
      } else {
        quoted = !quoted;
      }
    } else if (c == ',' && !quoted) {
      fields.emplace_back();
    } else if (c != '\r') {
      fields.back() += c;
    }
  }
  return fields;
}

std::vector<Example> load_examples() {
  std::ifstream in(std::string(MCPCLASS_SOURCE_DIR) + "/tests/data/training_data.csv");
  REQUIRE(in.good());
  std::vector<Example> out;
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const auto fields = split_csv_line(line);
    REQUIRE(fields.size() >= 2);
    out.push_back({fields[0], fields[1]});
  }
  return out;
}

std::unique_ptr<Classifier> default_classifier() {
  return config::make_classifier(config::default_config());
}

CategorySet small_set() {
  return CategorySet({{"math", "Math", "", {}, {}},
                      {"history", "History", "", {}, {}},
                      {"general", "General", "", {}, {}}});
}

}  // namespace

TEST_CASE("rule classifier: accuracy on training_data.csv") {
  const auto classifier = default_classifier();
  const auto examples = load_examples();
  REQUIRE(examples.size() == 95);

  std::size_t correct = 0;
  std::map<std::string, std::pair<std::size_t, std::size_t>> per_category;  // correct, total
  for (const auto& e : examples) {
    const auto c = classifier->classify(e.text, {true});
    auto& [ok, total] = per_category[e.category];
    ++total;
    if (c.category == e.category) {
      ++correct;
      ++ok;
    } else {
      MESSAGE("miss: [" << e.category << "] " << e.text << " -> " << c.category);
    }
  }
  const double accuracy = static_cast<double>(correct) / static_cast<double>(examples.size());
  std::ostringstream breakdown;
  for (const auto& [name, counts] : per_category)
    breakdown << ' ' << name << ' ' << counts.first << '/' << counts.second;
  MESSAGE("rule classifier accuracy: " << correct << "/" << examples.size() << " = " << accuracy
                                       << " |" << breakdown.str());
  CHECK(accuracy >= 0.95);
}

TEST_CASE("rule classifier: every result passes the router's validation rules") {
  const auto classifier = default_classifier();
  const auto n = classifier->categories().size();
  for (const auto& e : load_examples()) {
    CAPTURE(e.text);
    const auto c = classifier->classify(e.text, {true});
    CHECK_NOTHROW(check_classification(c, classifier->categories()));
    CHECK(router_validation_errors(to_wire(c, true), n).empty());
    CHECK(router_validation_errors(to_wire(c, false), n).empty());
    const double sum = std::accumulate(c.probabilities.begin(), c.probabilities.end(), 0.0);
    CHECK(sum == doctest::Approx(1.0).epsilon(1e-9));
    CHECK(c.confidence == *std::max_element(c.probabilities.begin(), c.probabilities.end()));
  }
}

TEST_CASE("rule classifier: matched text beats the fallback, unmatched text falls back") {
  const auto classifier = default_classifier();
  const auto math = classifier->classify("What is the derivative of x squared?");
  CHECK(math.category == "math");
  CHECK(math.class_index == 0);
  CHECK(classifier->classify("Tell me about the Roman empire").category == "history");
  CHECK(classifier->classify("How does a compiler optimise code?").category == "technology");

  const auto none = classifier->classify("zzz qqq");
  CHECK(none.category == "general");
  CHECK(none.class_index == 4);
  // Only the fallback bonus: softmax of {0,0,0,0,1} at T = 0.5.
  const double e2 = std::exp(2.0);
  CHECK(none.confidence == doctest::Approx(e2 / (e2 + 4.0)));
  const auto empty = classifier->classify("");
  CHECK(empty.category == "general");
}

TEST_CASE("rule classifier: scoring formula") {
  RuleSet rules;
  rules.rules["math"] = {{"integral*", "matrix"}, {"\\d\\s*\\+\\s*\\d"}, 1.0, 2.0};
  rules.rules["history"] = {{"empire"}, {}, 1.0, 2.0};
  rules.temperature = 1.0;
  const RuleClassifier classifier(small_set(), rules);

  CHECK(classifier.scores("Integrals of a MATRIX: 1 + 2") == std::vector<double>{4.0, 0.0, 0.0});
  // Distinct matches count once; case-insensitive; whole words only ("empires" is not "empire").
  CHECK(classifier.scores("empire empire EMPIRE") == std::vector<double>{0.0, 1.0, 0.0});
  CHECK(classifier.scores("empires") == std::vector<double>{0.0, 0.0, 0.0});
  CHECK(classifier.scores("the empire.") == std::vector<double>{0.0, 1.0, 0.0});

  const auto p = classifier.probabilities("matrix empire");  // tie 1:1
  CHECK(p[0] == doctest::Approx(std::exp(1.0) / (2.0 * std::exp(1.0) + 1.0)));
  CHECK(p[0] == p[1]);
  CHECK(classifier.classify("matrix empire").category == "math");  // tie → lower index
}

TEST_CASE("rule classifier: multi-word and prefix keywords, matched in one pass without a copy") {
  RuleSet rules;
  rules.rules["math"] = {
      {"linear algebra", "object-oriented*", "a b c d e f g h i j k l m n o p"}, {}, 1.0, 2.0};
  rules.rules["history"] = {{"roman emp*", "holy roman empire"}, {}, 1.0, 2.0};
  const RuleClassifier classifier(small_set(), rules);
  // Separators between the words of a keyword do not matter; case folds (ASCII only).
  CHECK(classifier.scores("LINEAR\talgebra") == std::vector<double>{1.0, 0.0, 0.0});
  CHECK(classifier.scores("linear, algebra!") == std::vector<double>{1.0, 0.0, 0.0});
  CHECK(classifier.scores("algebra linear") == std::vector<double>{0.0, 0.0, 0.0});
  // The last word may be a prefix; the words before it must be whole.
  CHECK(classifier.scores("Object Orientedness") == std::vector<double>{1.0, 0.0, 0.0});
  CHECK(classifier.scores("objects orientedness") == std::vector<double>{0.0, 0.0, 0.0});
  CHECK(classifier.scores("the Roman Emperors") == std::vector<double>{0.0, 1.0, 0.0});
  // Overlapping keywords each count once.
  CHECK(classifier.scores("the holy roman empire, the holy roman empire") ==
        std::vector<double>{0.0, 2.0, 0.0});
  // The longest keyword (16 words) matches after more than 16 words of text, at the end.
  const std::string sixteen = "a b c d e f g h i j k l m n o p";
  CHECK(classifier.scores("x y z " + sixteen + " " + sixteen) ==
        std::vector<double>{1.0, 0.0, 0.0});
  CHECK(classifier.scores("a b c d e f g h i j k l m n o q") == std::vector<double>{0, 0, 0});
  // Words over 16 in one keyword are refused, naming the key.
  RuleSet too_long;
  too_long.rules["math"] = {{sixteen + " q"}, {}, 1.0, 2.0};
  CHECK_THROWS_WITH_AS(RuleClassifier(small_set(), too_long), doctest::Contains("at most 16 words"),
                       ConfigError);
  // A '*' word over 48 characters is refused, also after other words (found by fuzz_config).
  const std::string long_word(88, 'x');
  for (const auto& keyword : {long_word + "*", "roman " + long_word + "*"}) {
    RuleSet long_prefix;
    long_prefix.rules["math"] = {{keyword}, {}, 1.0, 2.0};
    CHECK_THROWS_WITH_AS(RuleClassifier(small_set(), long_prefix),
                         doctest::Contains("may have at most 48 characters"), ConfigError);
  }
  RuleSet longest_prefix;
  longest_prefix.rules["math"] = {{"roman " + std::string(48, 'x') + "*"}, {}, 1.0, 2.0};
  CHECK(RuleClassifier(small_set(), longest_prefix).scores("Roman " + std::string(50, 'X')) ==
        std::vector<double>{1.0, 0.0, 0.0});
}

TEST_CASE("rule classifier: thousands of keywords (past the matcher's inline bitmap)") {
  RuleSet rules;
  auto& math = rules.rules["math"];
  math.keyword_weight = 1.0;
  for (int i = 0; i < 5000; ++i) math.keywords.push_back("kw" + std::to_string(i));
  rules.rules["history"] = {{"empire"}, {}, 1.0, 2.0};
  const RuleClassifier classifier(small_set(), rules);
  CHECK(classifier.scores("kw0 kw4095 kw4096 kw4999 KW4999 empire") ==
        std::vector<double>{4.0, 1.0, 0.0});
}

TEST_CASE("rule classifier: deterministic and thread-compatible") {
  const auto classifier = default_classifier();
  const std::string text = "Explain how photosynthesis converts light energy in plant cells";
  const auto first = to_wire(classifier->classify(text, {true}), true);
  for (int i = 0; i < 20; ++i) CHECK(to_wire(classifier->classify(text, {true}), true) == first);

  // Concurrent use of one instance gives the same answers.
  std::vector<json::object> results(4);
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < results.size(); ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) results[t] = to_wire(classifier->classify(text, {true}), true);
    });
  for (auto& th : threads) th.join();
  for (const auto& r : results) CHECK(r == first);
}

TEST_CASE("rule classifier: hostile input stays fast") {
  RuleSet rules;
  rules.rules["math"] = {{}, {"(a+)+$", "(x+x+)+y", "(\\w+\\s?)*z$"}, 1.0, 2.0};
  const RuleClassifier hostile(small_set(), rules);
  const std::string as(100 * 1024, 'a');
  const std::string text = as + "!";
  std::string words;
  while (words.size() < 100 * 1024) words += "derivative empire atom python xxxxxxxx ";

  const auto start = std::chrono::steady_clock::now();
  const auto c0 = hostile.classify(as);
  const auto c1 = hostile.classify(text);
  const auto c2 = hostile.classify(std::string(100 * 1024, 'x'));
  const auto c3 = default_classifier()->classify(words, {true});
  const auto c4 = default_classifier()->classify(as);
  const auto elapsed = std::chrono::steady_clock::now() - start;

  CHECK(c0.category == "math");     // "(a+)+$" matches at the end
  CHECK(c1.category == "general");  // ... and the trailing "!" defeats it, in linear time
  CHECK(c2.category == "general");
  CHECK(c3.category == "math");  // every category matches once; ties → lowest index
  CHECK(c4.category == "general");
  CHECK(std::chrono::duration_cast<std::chrono::seconds>(elapsed).count() < 5);
}

TEST_CASE("rule classifier: catch-all and invalid patterns are rejected with the key path") {
  const auto build = [](std::vector<std::string> patterns) {
    RuleSet rules;
    rules.rules["general"] = {{}, std::move(patterns), 1.0, 2.0};
    RuleClassifier classifier(small_set(), rules);
  };
  for (const std::string p : {".*", "", "a*", "^", "$", "(?:)", "\\b", "x|", ".", ".+", "(?s)."}) {
    CAPTURE(p);
    try {
      build({"ok", p});
      FAIL("accepted " << p);
    } catch (const ConfigError& e) {
      CHECK(e.path() == "classifier.rules.general.patterns[1]");
      CHECK(std::string(e.what()).find("every text") != std::string::npos);
    }
  }
  try {
    build({"(unclosed"});
    FAIL("accepted an invalid pattern");
  } catch (const ConfigError& e) {
    CHECK(e.path() == "classifier.rules.general.patterns[0]");
    CHECK(std::string(e.what()).find("invalid regular expression") != std::string::npos);
  }

  RuleSet unknown;
  unknown.rules["poetry"] = {{"sonnet"}, {}, 1.0, 2.0};
  CHECK_THROWS_WITH_AS(RuleClassifier(small_set(), unknown),
                       "classifier.rules.poetry: unknown category 'poetry'", ConfigError);
  RuleSet bad_keyword;
  bad_keyword.rules["math"] = {{"sum", "  "}, {}, 1.0, 2.0};
  CHECK_THROWS_WITH_AS(RuleClassifier(small_set(), bad_keyword),
                       "classifier.rules.math.keywords[1]: keyword must not be empty", ConfigError);
  RuleSet bad_fallback;
  bad_fallback.fallback = "other";
  CHECK_THROWS_WITH_AS(RuleClassifier(small_set(), bad_fallback),
                       "classifier.fallback: unknown category 'other'", ConfigError);
}

TEST_CASE("rule classifier: info for /health") {
  const auto classifier = default_classifier();
  const auto info = classifier->info();
  CHECK(classifier->kind() == "rules");
  CHECK(info.at("kind") == "rules");
  CHECK(info.at("index_size").to_number<std::int64_t>() > 100);
  CHECK(info.at("fallback") == "general");
  CHECK(info.contains("model"));
}
