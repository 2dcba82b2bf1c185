// SchemaValidator: the direct check of flat object schemas must agree with valijson, which it
// skips only when it can say "valid" (server/schema_validator.hpp).
#include "server/schema_validator.hpp"

#include <doctest/doctest.h>

#include <boost/json.hpp>

namespace json = boost::json;
using mcpclass::server::SchemaValidator;

namespace {

// classify_text's input schema, the common shape.
const char* kFlat = R"({"type":"object",
  "properties":{"text":{"type":"string","description":"d"},
                "with_probabilities":{"type":"boolean","default":false},
                "k":{"type":"integer"},"t":{"type":"number"}},
  "required":["text"]})";

std::optional<std::string> check(const char* schema, const char* value) {
  return SchemaValidator(json::parse(schema).as_object()).validate(json::parse(value));
}

}  // namespace

TEST_CASE("a flat schema accepts what valijson accepts") {
  for (const char* ok :
       {R"({"text":"a"})", R"({"text":"a","with_probabilities":true})",
        R"({"text":"a","k":3,"t":0.5})", R"({"text":"a","t":2})", R"({"text":"a","extra":[1]})"}) {
    CAPTURE(ok);
    CHECK_FALSE(check(kFlat, ok));
  }
}

TEST_CASE("a flat schema rejects with valijson's message") {
  CHECK(check(kFlat, R"({})") == "Missing required property 'text'.");
  CHECK(check(kFlat, R"({"text":1})") == "text: Value type not permitted by 'type' constraint.");
  CHECK(check(kFlat, R"({"text":"a","with_probabilities":"yes"})") ==
        "with_probabilities: Value type not permitted by 'type' constraint.");
  CHECK(check(kFlat, R"({"text":"a","k":1.5})") ==
        "k: Value type not permitted by 'type' constraint.");
  CHECK(check(kFlat, R"([])"));
}

TEST_CASE("additionalProperties false is enforced on the direct path too") {
  const char* closed = R"({"type":"object","properties":{"a":{"type":"string"}},
                           "additionalProperties":false})";
  CHECK_FALSE(check(closed, R"({"a":"x"})"));
  CHECK(check(closed, R"({"a":"x","b":1})"));
}

TEST_CASE("schemas beyond the flat shape go to valijson") {
  const char* bounded = R"({"type":"object","properties":{"a":{"type":"string","maxLength":2}}})";
  CHECK_FALSE(check(bounded, R"({"a":"xy"})"));
  const auto problem = check(bounded, R"({"a":"xyz"})");
  REQUIRE(problem);
  CHECK(problem->starts_with("a: String should be no more than 2"));
}
