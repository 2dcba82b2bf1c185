// The http_classify client's checks of an answer (remote/http_classify_answer.hpp), rule by rule
// as the Semantic Router's client applies them, each refusal naming what broke it.
#include "mcpclass/remote/remote_classifier.hpp"
#include "remote/http_classify_answer.hpp"
#include "util/excerpt.hpp"

#include <doctest/doctest.h>

#include <map>
#include <string>

using namespace mcpclass;

namespace {

classify::CategorySet categories() {
  std::vector<classify::Category> all;
  for (const char* name : {"math", "science", "other"}) {
    classify::Category c;
    c.name = name;
    all.push_back(std::move(c));
  }
  return classify::CategorySet(std::move(all));
}

std::vector<double> scores(const std::string& body,
                           const std::map<std::string, std::string>& labels = {}) {
  return remote::detail::http_classify_scores(body, categories(), labels, "other");
}

// The message of the RemoteInvalidResult `body` is refused with.
std::string refusal(const std::string& body) {
  try {
    scores(body);
  } catch (const remote::RemoteInvalidResult& e) {
    return e.what();
  }
  FAIL("accepted: " << body);
  return {};
}

}  // namespace

TEST_CASE("http_classify answer: matched by label, in any order, the fallback may be absent") {
  CHECK(scores(R"([{"label":"science","score":0.25},{"label":"math","score":0.75}])") ==
        std::vector<double>{0.75, 0.25, 0.0});
  CHECK(scores(R"([{"label":"LABEL_1","score":0.6},{"label":"LABEL_0","score":0.4}])",
               {{"LABEL_0", "math"}, {"LABEL_1", "science"}}) ==
        std::vector<double>{0.4, 0.6, 0.0});
  // Within the router's tolerance of 0.02.
  CHECK(scores(R"([{"label":"math","score":0.5},{"label":"science","score":0.515}])")[1] == 0.515);
}

TEST_CASE("http_classify answer: each broken rule is named") {
  CHECK(refusal("not json").find("not JSON") != std::string::npos);
  CHECK(refusal(R"({"label":"math","score":1})").find("not a list of {label, score}") !=
        std::string::npos);
  CHECK(refusal("[]").find("it contained no labels") != std::string::npos);
  CHECK(refusal(R"([{"label":"math"}])").find("an element is not") != std::string::npos);
  CHECK(refusal(R"([{"label":"LABEL_2","score":0.5},{"label":"math","score":0.5}])")
            .find("label 'LABEL_2' is not a configured category (categories: math, science, "
                  "other)") != std::string::npos);
  CHECK(refusal(R"([{"label":"math","score":0.5},{"label":"math","score":0.5}])")
            .find("label 'math' appears twice") != std::string::npos);
  CHECK(refusal(R"([{"label":"math","score":1.5},{"label":"science","score":0}])")
            .find("label 'math' has the score 1.5, not a number within [0, 1]") !=
        std::string::npos);
  CHECK(refusal(R"([{"label":"math","score":0.9},{"label":"other","score":0.1}])")
            .find("it lacks the categories science") != std::string::npos);
  CHECK(refusal(R"([{"label":"math","score":0.5},{"label":"science","score":0.45}])")
            .find("its scores sum to 0.95, not 1 ± 0.02") != std::string::npos);
  // A server that lies breaks several rules at once: all of them are said.
  const std::string lie = refusal(R"([{"label":"math","score":0.7}])");
  CHECK(lie.find("it has 1 label (math), not a distribution of at least 2") != std::string::npos);
  CHECK(lie.find("it lacks the categories science") != std::string::npos);
  CHECK(lie.find("its scores sum to 0.7") != std::string::npos);
}

TEST_CASE("http_classify answer: a refusal quotes at most kExcerptBytes of the reply") {
  using util::kExcerptBytes;
  // A 1 MiB body, label or object: the message stays small and still names the problem.
  const std::string huge(1 << 20, 'x');
  const std::string not_json = refusal(huge);
  CHECK(not_json.size() < kExcerptBytes + 100);
  CHECK(not_json.find("not JSON") != std::string::npos);
  CHECK(not_json.find("… (1048576 bytes)") != std::string::npos);
  const std::string label = refusal(R"([{"label":")" + huge + R"(","score":0.5}])");
  CHECK(label.size() < kExcerptBytes + 200);
  CHECK(label.find("is not a configured category (categories: math, science, other)") !=
        std::string::npos);
  const std::string object = refusal(R"({"error":")" + huge + R"("})");
  CHECK(object.size() < kExcerptBytes + 100);
  CHECK(object.find("not a list of {label, score}: {\"error\":\"xxx") != std::string::npos);
  const std::string element = refusal(R"([{"label":")" + huge + R"("}])");
  CHECK(element.size() < kExcerptBytes + 150);  // the rule quoted is long
  CHECK(element.find("an element is not") != std::string::npos);
}
