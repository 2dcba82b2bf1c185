// LoRA adapters in PEFT's layout (tests/transformers/make_lora_fixtures.py): `adapter:` in the
// configuration, and every adapter that does not fit its base is a load error naming the file
// and the key or tensor at fault.
#include "mcpclass/learned/learned_classifier.hpp"

#ifdef MCPCLASS_WITH_LEARNED

#include "architectures/bert/bert_model.hpp"
#include "checkpoint/safetensors.hpp"
#include "learned/safetensors_file.hpp"
#include "mcpclass/classify/errors.hpp"
#include "mcpclass/config/config.hpp"
#include "transformer_fixtures.hpp"

#include <doctest/doctest.h>

#include <limits>

using namespace mcpclass;
using namespace mcpclass::learned;
using mcpclass::classify::ClassifyError;
using namespace mcpclass::checkpoint;
namespace json = boost::json;
namespace tt = transformer_test;

namespace {

const std::string kQueryA =
    "base_model.model.bert.encoder.layer.0.attention.self.query.lora_A.weight";
const std::string kQueryB =
    "base_model.model.bert.encoder.layer.0.attention.self.query.lora_B.weight";

std::string adapter_error(const std::string& adapter) {
  return tt::load_error<mcpclass::architectures::BertSequenceModel>(tt::fixture("bert-f32"),
                                                                    adapter);
}

void set_adapter_config(const std::string& dir, const std::string& key, const json::value& v) {
  auto c = json::parse(tt::read_file(dir + "/adapter_config.json")).as_object();
  c[key] = v;
  tt::write_file(dir + "/adapter_config.json", json::serialize(c));
}

// Applies `change` to the adapter's tensors and writes them back.
template <class F>
void edit_tensors(const std::string& dir, F change) {
  auto file = read_safetensors(dir + "/adapter_model.safetensors");
  change(file.tensors);
  detail::write_safetensors(dir + "/adapter_model.safetensors", file);
}

bool contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return true;
  MESSAGE(text);
  return false;
}

}  // namespace

TEST_CASE("transformers.lora: adapter in the configuration is merged into the model") {
  const auto config = config::config_from_json(
      json::parse(R"({"classifier": {"kind": "transformer", "model": ")" + tt::fixture("bert-f32") +
                  R"(", "adapter": ")" + tt::fixture("bert-lora") + R"(", "max_tokens": 64}})"));
  CHECK(config.classifier.learned.adapter == tt::fixture("bert-lora"));
  const auto classifier = config::make_classifier(config);
  CHECK(classifier->info().at("adapter").as_string() == tt::fixture("bert-lora"));
  const auto reference = json::parse(tt::read_file(tt::fixture("lora_reference.json"))).as_object();
  const auto& texts = reference.at("texts").as_array();
  const auto& logits = reference.at("models").at("bert-lora").at("logits").as_array();
  std::size_t changed = 0;
  const auto plain = config::make_classifier(
      config::config_from_json(json::parse(R"({"classifier": {"kind": "transformer", "model": ")" +
                                           tt::fixture("bert-f32") + R"(", "max_tokens": 64}})")));
  for (std::size_t i = 0; i < texts.size(); ++i) {
    const std::string text(texts[i].as_string());
    CAPTURE(text);
    const auto& row = logits[i].as_array();
    std::size_t best = 0;
    for (std::size_t j = 1; j < row.size(); ++j)
      if (row[j].to_number<double>() > row[best].to_number<double>()) best = j;
    const auto got = classifier->classify(text, {});
    CHECK(got.category == config.categories.names()[best]);
    changed += got.category != plain->classify(text, {}).category;
  }
  CHECK(changed > 0);
}

TEST_CASE("transformers.lora: a missing or foreign adapter names the file") {
  const auto dir = tt::copy_of("bert-lora", "lora-files");
  SUBCASE("no adapter_config.json") {
    std::filesystem::remove(dir + "/adapter_config.json");
    CHECK(contains(adapter_error(dir), "cannot read '" + dir + "/adapter_config.json'"));
  }
  SUBCASE("no adapter_model.safetensors") {
    std::filesystem::remove(dir + "/adapter_model.safetensors");
    CHECK(contains(adapter_error(dir), "'" + dir + "' has no adapter_model.safetensors"));
  }
  SUBCASE("another peft_type") {
    set_adapter_config(dir, "peft_type", "IA3");
    CHECK(contains(adapter_error(dir), "adapter_config.json' peft_type 'IA3' is not supported"));
  }
  SUBCASE("a tensor without PEFT's prefix") {
    edit_tensors(dir, [](auto& t) { t["bert.pooler.dense.weight"] = t.at(kQueryA); });
    CHECK(contains(adapter_error(dir),
                   "adapter_model.safetensors' tensor 'bert.pooler.dense.weight' does not start "
                   "with 'base_model.model.'"));
  }
}

TEST_CASE("transformers.lora: options mcpclass does not implement are refused by key") {
  const auto dir = tt::copy_of("bert-lora", "lora-options");
  for (const char* key : {"use_dora", "lora_bias", "fan_in_fan_out"}) {
    CAPTURE(key);
    set_adapter_config(dir, key, true);
    CHECK(contains(adapter_error(dir),
                   "adapter_config.json' " + std::string(key) + " is not supported"));
    set_adapter_config(dir, key, false);
  }
  set_adapter_config(dir, "rank_pattern", json::object{{"query", 8}});
  CHECK(contains(adapter_error(dir), "rank_pattern is not supported"));
  set_adapter_config(dir, "rank_pattern", json::object{});
  set_adapter_config(dir, "target_modules", "(unclosed");
  CHECK(contains(adapter_error(dir), "target_modules is not a valid regular expression"));
}

TEST_CASE("transformers.lora: an adapter that does not fit its base names the tensor") {
  const auto dir = tt::copy_of("bert-lora", "lora-fit");
  SUBCASE("a LoRA tensor naming no base tensor") {
    edit_tensors(dir, [](auto& t) {
      const std::string at = "base_model.model.bert.encoder.layer.7.attention.self.query.";
      t[at + "lora_A.weight"] = t.at(kQueryA);
      t[at + "lora_B.weight"] = t.at(kQueryB);
    });
    CHECK(contains(adapter_error(dir),
                   "adapts 'bert.encoder.layer.7.attention.self.query.weight', which '" +
                       tt::fixture("bert-f32") + "/model.safetensors' does not have"));
  }
  SUBCASE("a shape mismatch") {
    edit_tensors(dir, [](auto& t) {
      auto& b = t.at(kQueryB);
      b.shape = {32, 4};
      b.values.resize(32 * 4);
    });
    CHECK(contains(adapter_error(dir),
                   "make a [32, 64] update but "
                   "'bert.encoder.layer.0.attention.self.query.weight' is "
                   "[64, 64]"));
  }
  SUBCASE("r mismatch") {
    set_adapter_config(dir, "r", 8);
    CHECK(
        contains(adapter_error(dir), "has rank 4 but '" + dir + "/adapter_config.json' says r 8"));
  }
  SUBCASE("a lora_A without its lora_B") {
    edit_tensors(dir, [](auto& t) { t.erase(kQueryB); });
    CHECK(contains(adapter_error(dir), "tensor '" + kQueryA + "' has no matching B factor"));
  }
  SUBCASE("a module target_modules does not name") {
    set_adapter_config(dir, "target_modules", json::array{"query", "dense"});
    CHECK(contains(adapter_error(dir),
                   "adapts module 'bert.encoder.layer.0.attention.self.value', "
                   "which target_modules of"));
  }
  SUBCASE("a full tensor outside modules_to_save") {
    set_adapter_config(dir, "modules_to_save", nullptr);
    CHECK(contains(adapter_error(dir),
                   "tensor 'base_model.model.classifier.bias' is neither a "
                   "LoRA factor nor in modules_to_save"));
  }
  SUBCASE("a head of the wrong size in modules_to_save") {
    edit_tensors(dir, [](auto& t) {
      auto& w = t.at("base_model.model.classifier.weight");
      w.shape = {4, 64};
      w.values.resize(4 * 64);
    });
    const auto e = adapter_error(dir);
    CHECK(contains(e, dir + "/adapter_model.safetensors"));
    CHECK(contains(e, "tensor 'classifier.weight' is 4×64, expected 3×64"));
  }
  SUBCASE("non-finite factors") {
    edit_tensors(dir,
                 [](auto& t) { t.at(kQueryA).values[3] = std::numeric_limits<float>::infinity(); });
    CHECK(contains(adapter_error(dir), "tensor '" + kQueryA + "' holds non-finite values"));
  }
}

#endif  // MCPCLASS_WITH_LEARNED
