// The native ModernBERT sequence classifier (ModernBERT, mmBERT with YaRN) against the PyTorch
// reference of tests/transformers/make_modernbert_fixtures.py: float32 logits, a bfloat16
// checkpoint, batches of mixed lengths, the encoder's token states, `kind: transformer` picking
// the architecture, and damaged or contradictory checkpoints as load errors naming the tensor.
#include "mcpclass/learned/learned_classifier.hpp"

#ifdef MCPCLASS_WITH_LEARNED

#include "architectures/common/sequence_model.hpp"
#include "architectures/modernbert/modernbert_model.hpp"
#include "checkpoint/safetensors.hpp"
#include "learned/safetensors_file.hpp"
#include "mcpclass/classify/errors.hpp"
#include "mcpclass/config/config.hpp"
#include "transformer_checks.hpp"
#include "transformer_fixtures.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>

using namespace mcpclass;
using namespace mcpclass::learned;
using mcpclass::classify::ClassifyError;
using namespace mcpclass::kernels;
using namespace mcpclass::checkpoint;
using namespace mcpclass::architectures;
namespace json = boost::json;
namespace tt = transformer_test;

namespace {

constexpr const char* kReference = "modernbert-reference.json";

json::object reference_model(const std::string& name) {
  return tt::reference(kReference).at("models").at(name).as_object();
}

tt::Run run(const ModernBertModel& model, const std::string& dir) {
  return tt::run_reference_texts(model, dir, model.config().max_tokens(), kReference);
}

void check_float32(const std::string& name) {
  const auto ref = reference_model(name);
  const auto dir = tt::fixture(name + "-f32");
  const ModernBertModel model(dir);
  const auto r = run(model, dir);
  CHECK(r.ids == tt::reference_ids(ref));
  // The sliding window is shorter than the longest texts, so the local layers cut them.
  std::size_t longest = 0;
  for (const auto& ids : r.ids) longest = std::max(longest, ids.size());
  CHECK(longest > model.config().local_attention + 1);
  const double gap = tt::max_abs_difference(r.logits, tt::reference_logits(ref));
  MESSAGE(name << " float32: max |logit − reference| = " << gap);
  CHECK(gap <= 1e-4);
}

std::string load_error(const std::string& dir) {
  return tt::load_error<ModernBertModel>(dir);
}

using tt::set_config;

}  // namespace

TEST_CASE("transformers.reference.modernbert_f32") {
  check_float32("modernbert");
}

TEST_CASE("transformers.reference.mmbert_yarn_f32") {
  const ModernBertModel model(tt::fixture("mmbert-f32"));
  const auto& rope = model.config().global_rope;
  REQUIRE(rope.type == RopeSettings::Type::yarn);
  CHECK(rope.factor == 4.0);
  CHECK(model.config().local_rope.type == RopeSettings::Type::yarn);
  CHECK(model.config().mean_pooling);
  check_float32("mmbert");
}

TEST_CASE("transformers.reference.modernbert_bf16_checkpoint") {
  const auto want = tt::reference_logits(reference_model("modernbert"));
  const auto dir = tt::fixture("modernbert-bf16");
  const auto gap = tt::probability_gap(run(ModernBertModel(dir), dir).logits, want, 3);
  MESSAGE("modernbert bf16 checkpoint: max |p − reference p| = " << gap.worst);
  CHECK(gap.argmax_differs == 0);
  CHECK(gap.worst <= 0.02);
}

TEST_CASE("transformers.reference.modernbert_mixed_batch_equals_one_by_one") {
  for (const std::string name : {"modernbert", "mmbert"}) {
    CAPTURE(name);
    const auto dir = tt::fixture(name + "-f32");
    const ModernBertModel model(dir);
    const auto batch = run(model, dir);
    std::vector<BertInput> inputs;
    for (const auto& ids : batch.ids) inputs.push_back({ids, {}});
    const auto states = model.hidden_states(inputs, 1);
    REQUIRE(states.width == 64);
    // Bit for bit, also when the single texts run on two threads and the batch on one.
    for (const std::size_t threads : {1, 2}) {
      CAPTURE(threads);
      for (std::size_t i = 0; i < batch.ids.size(); ++i) {
        const auto one = std::span(&inputs[i], 1);
        const auto single = model.logits(one, threads);
        for (std::size_t j = 0; j < single.size(); ++j) CHECK(single[j] == batch.logits[i * 3 + j]);
        const auto alone = model.hidden_states(one, threads);
        REQUIRE(alone.tokens[0] == states.tokens[i]);
        CHECK(std::ranges::equal(alone.text(0), states.text(i)));
      }
    }
  }
}

TEST_CASE("transformers.classifier: kind transformer runs a ModernBERT checkpoint") {
  tt::check_classifier_matches_reference("mmbert-f32", kReference, "mmbert",
                                         "ModernBertForSequenceClassification");
}

TEST_CASE("transformers.checkpoint: ModernBERT load errors name the file and tensor or key") {
  SUBCASE("a missing tensor") {
    const auto dir = tt::copy_of("modernbert-f32", "mb-missing");
    auto file = read_safetensors(dir + "/model.safetensors");
    file.tensors.erase("model.layers.2.mlp.Wi.weight");
    learned::detail::write_safetensors(dir + "/model.safetensors", file);
    CHECK(load_error(dir) ==
          "'" + dir + "/model.safetensors' has no tensor 'model.layers.2.mlp.Wi.weight'");
  }
  SUBCASE("hidden_size contradicting the tensors") {
    const auto dir = tt::copy_of("modernbert-f32", "mb-hidden");
    set_config(dir, "hidden_size", 32);
    CHECK(load_error(dir).find("tensor 'model.embeddings.tok_embeddings.weight' is 220×64, "
                               "expected 220×32") != std::string::npos);
  }
  SUBCASE("NaN weights") {
    const auto dir = tt::copy_of("modernbert-f32", "mb-nan");
    auto file = read_safetensors(dir + "/model.safetensors");
    file.tensors.at("model.layers.1.attn.Wqkv.weight").values[7] =
        std::numeric_limits<float>::quiet_NaN();
    learned::detail::write_safetensors(dir + "/model.safetensors", file);
    CHECK(load_error(dir).find("tensor 'model.layers.1.attn.Wqkv.weight' holds non-finite") !=
          std::string::npos);
  }
  SUBCASE("norm_bias true over a bias-free checkpoint") {
    const auto dir = tt::copy_of("modernbert-f32", "mb-bias");
    set_config(dir, "norm_bias", true);
    CHECK(load_error(dir).find("has no tensor 'model.embeddings.norm.bias'") != std::string::npos);
  }
  SUBCASE("attention_bias false over a checkpoint with biases") {
    const auto dir = tt::copy_of("mmbert-f32", "mb-unused");
    set_config(dir, "attention_bias", false);
    CHECK(load_error(dir).find("tensor 'model.layers.0.attn.Wo.bias' is not part of a "
                               "ModernBertForSequenceClassification") != std::string::npos);
  }
  SUBCASE("an unsupported rope type") {
    const auto dir = tt::copy_of("mmbert-f32", "mb-rope");
    set_config(dir, "rope_scaling", json::object{{"rope_type", "longrope"}, {"factor", 4.0}});
    CHECK(load_error(dir).find("rope_scaling.rope_type 'longrope' is not supported (default, "
                               "linear, yarn)") != std::string::npos);
  }
  SUBCASE("layer_types of the wrong length") {
    const auto dir = tt::copy_of("modernbert-f32", "mb-types");
    set_config(dir, "layer_types", json::array{"full_attention", "sliding_attention"});
    CHECK(load_error(dir).find("layer_types must list 4 layers") != std::string::npos);
  }
  SUBCASE("an unsupported pooling") {
    const auto dir = tt::copy_of("modernbert-f32", "mb-pooling");
    set_config(dir, "classifier_pooling", "max");
    CHECK(load_error(dir).find("classifier_pooling 'max' is not supported (cls, mean)") !=
          std::string::npos);
  }
  SUBCASE("an architecture no implementation supports") {
    const auto dir = tt::copy_of("modernbert-f32", "mb-arch");
    set_config(dir, "architectures", json::array{"ModernBertForMaskedLM"});
    try {
      (void)open_sequence_model(dir);
      FAIL("loaded");
    } catch (const ClassifyError& e) {
      CHECK(std::string(e.what()).find("architecture 'ModernBertForMaskedLM' is not supported") !=
            std::string::npos);
    }
  }
}

TEST_CASE("transformers.checkpoint: the newer layer_types and rope_parameters config layout") {
  // The same model as modernbert-f32, configured as transformers 5 writes it.
  const auto dir = tt::copy_of("modernbert-f32", "mb-layout");
  auto c = json::parse(tt::read_file(dir + "/config.json")).as_object();
  for (const char* key : {"global_attn_every_n_layers", "global_rope_theta", "local_rope_theta"})
    c.erase(key);
  c["layer_types"] =
      json::array{"full_attention", "sliding_attention", "full_attention", "sliding_attention"};
  c["rope_parameters"] = json::object{
      {"full_attention", json::object{{"rope_type", "default"}, {"rope_theta", 160000.0}}},
      {"sliding_attention", json::object{{"rope_type", "default"}, {"rope_theta", 10000.0}}}};
  tt::write_file(dir + "/config.json", json::serialize(c));
  const auto want =
      run(ModernBertModel(tt::fixture("modernbert-f32")), tt::fixture("modernbert-f32"));
  const auto got = run(ModernBertModel(dir), dir);
  CHECK(got.logits == want.logits);
}

#endif  // MCPCLASS_WITH_LEARNED
