// classify::Provenance: the ids are stable for the same classifier and change with what they
// name; the result cache and the service's generations show in it.
#include "mcpclass/classify/cached_classifier.hpp"
#include "mcpclass/classify/provenance.hpp"
#include "mcpclass/classify/rule_classifier.hpp"
#include "mcpclass/config/config.hpp"
#include "mcpclass/learned/learned_settings.hpp"
#include "mcpclass/service/classification_service.hpp"

#ifdef MCPCLASS_WITH_LEARNED
#include "transformer_fixtures.hpp"
#endif

#include <doctest/doctest.h>

#include <filesystem>
#include <memory>

using namespace mcpclass;
using namespace mcpclass::classify;

namespace {

CategorySet two_categories() {
  return CategorySet({{"math", "Math", "", {}, {}}, {"general", "General", "", {}, {}}});
}

RuleSet keywords(std::vector<std::string> words) {
  RuleSet rules;
  rules.rules["math"] = {std::move(words), {}, 1.0, 2.0};
  return rules;
}

}  // namespace

TEST_CASE("provenance: taxonomy ids follow the ordered names") {
  const auto id = taxonomy_id({"math", "general"});
  CHECK(id.rfind("fnv1a64:", 0) == 0);
  CHECK(id.size() == 8 + 16);
  CHECK(taxonomy_id({"math", "general"}) == id);
  CHECK(taxonomy_id({"general", "math"}) != id);
  // Names are separated: "ab"+"c" is not "a"+"bc".
  CHECK(taxonomy_id({"ab", "c"}) != taxonomy_id({"a", "bc"}));
  CHECK(fnv1a64_id("") == "fnv1a64:cbf29ce484222325");  // FNV-1a's offset basis
}

TEST_CASE("provenance: a rules model id is the rules, and the JSON names every field") {
  const RuleClassifier a(two_categories(), keywords({"integral"}));
  const RuleClassifier same(two_categories(), keywords({"integral"}));
  const RuleClassifier other(two_categories(), keywords({"matrix"}));
  CHECK(a.model_id() == same.model_id());
  CHECK(a.model_id() != other.model_id());

  const Provenance p = provenance_of(a, 3);
  CHECK(p.kind == "rules");
  CHECK(p.taxonomy_id == taxonomy_id({"math", "general"}));
  const auto json = p.to_json();
  CHECK(json.at("tokenizer_id").is_null());
  CHECK(json.at("generation").to_number<std::uint64_t>() == 3);
  CHECK(json.at("cached").as_bool() == false);
  const auto headers = p.headers();
  CHECK(headers.size() == 6);  // no tokenizer header
  CHECK(headers.front() == std::pair<std::string, std::string>{"X-Mcpclass-Classifier", "rules"});
}

TEST_CASE("provenance: a cache hit says cached and keeps the model id") {
  auto rules = std::make_shared<const RuleClassifier>(two_categories(), keywords({"integral"}));
  const CachedClassifier cached(rules, CacheOptions{.entries = 10});
  CHECK(cached.model_id() == rules->model_id());
  CHECK_FALSE(cached.classify("an integral").cached);
  const auto hit = cached.classify("an integral");
  CHECK(hit.cached);
  CHECK(provenance_of(cached, 1).of(hit).to_json().at("cached").as_bool());
}

TEST_CASE("provenance: the service's generation and classifier are read together") {
  service::ClassificationService service(config::default_config());
  const auto first = service.served();
  CHECK(first->provenance.generation == 1);
  CHECK(service.health().at("provenance").as_object().at("generation").to_number<int>() == 1);
  const auto result = service.reload([] {
    return config::parse_config(
        "categories:\n  - {name: math, description: Math}\n"
        "  - {name: general, description: Everything else}\n");
  });
  REQUIRE(result.ok);
  const auto second = service.served();
  CHECK(second->provenance.generation == 2);
  CHECK(second->provenance.taxonomy_id == taxonomy_id({"math", "general"}));
  CHECK(second->provenance.taxonomy_id != first->provenance.taxonomy_id);
  CHECK(second->provenance.model_id == second->classifier->model_id());
  service.stop();
}

#ifdef MCPCLASS_WITH_LEARNED  // a build without the learned component has no transformer kind

TEST_CASE("provenance: a transformer's ids are checksums of its weights and tokenizer") {
  namespace tt = transformer_test;
  const auto dir = tt::copy_of("bert-f32", "provenance");
  const auto load = [&] {
    return config::make_classifier(config::config_from_json(boost::json::parse(
        R"({"classifier": {"kind": "transformer", "model": ")" + dir + R"("}})")));
  };
  const auto first = load();
  const auto p = provenance_of(*first, 1);
  CHECK(p.kind == "transformer");
  CHECK(p.model_id.rfind("fnv1a64:", 0) == 0);
  CHECK(p.tokenizer_id == learned::files_id({dir + "/tokenizer.json"}));
  CHECK(load()->model_id() == p.model_id);  // the same bytes, the same id

  // One weight's lowest mantissa bit flipped (still finite): a new model id, the same tokenizer.
  auto weights = tt::read_file(dir + "/model.safetensors");
  weights[weights.size() - 4] = static_cast<char>(weights[weights.size() - 4] ^ 1);
  tt::write_file(dir + "/model.safetensors", weights);
  const auto changed = load();
  CHECK(changed->model_id() != p.model_id);
  CHECK(changed->tokenizer_id() == p.tokenizer_id);
  std::filesystem::remove_all(dir);
}

#endif
