// The native DeBERTa-v2/v3 classifiers against the PyTorch reference of
// tests/transformers/make_deberta_fixtures.py: float32 logits of the v3 layout (log position
// buckets, shared attention keys, no absolute positions) and of the older v2 one (absolute
// positions, token types, embed_proj, separate position projections, clamped distances), the
// token head, the relative buckets, batches of mixed lengths, `kind: transformer` picking the
// architecture, and damaged or unsupported checkpoints as load errors naming the key or tensor.
#include "mcpclass/learned/learned_classifier.hpp"

#ifdef MCPCLASS_WITH_LEARNED

#include "architectures/common/sequence_model.hpp"
#include "architectures/common/token_model.hpp"
#include "architectures/deberta/deberta_model.hpp"
#include "architectures/deberta/deberta_token_model.hpp"
#include "checkpoint/safetensors.hpp"
#include "mcpclass/classify/errors.hpp"
#include "mcpclass/config/config.hpp"
#include "transformer_checks.hpp"
#include "transformer_fixtures.hpp"

#include <doctest/doctest.h>

#include <cmath>

using namespace mcpclass;
using namespace mcpclass::architectures;
namespace json = boost::json;
namespace tt = transformer_test;

namespace {

constexpr const char* kReference = "deberta-reference.json";

json::object reference_model(const std::string& name) {
  return tt::reference(kReference).at("models").at(name).as_object();
}

void check_sequence(const std::string& name) {
  const auto ref = reference_model(name);
  const auto dir = tt::fixture(name + "-f32");
  const DebertaModel model(dir);
  const auto r = tt::run_reference_texts(model, dir, model.config().max_tokens(), kReference);
  CHECK(r.ids == tt::reference_ids(ref));
  const double gap = tt::max_abs_difference(r.logits, tt::reference_logits(ref));
  MESSAGE(name << " float32: max |logit − reference| = " << gap);
  CHECK(gap <= 1e-4);
}

std::string load_error(const std::string& dir) {
  return tt::load_error<DebertaModel>(dir);
}

}  // namespace

TEST_CASE("transformers.reference.deberta_v3_f32") {
  const DebertaModel model(tt::fixture("deberta-v3-f32"));
  const auto& c = model.config();
  CHECK(c.relative_attention);
  CHECK(c.position_buckets == 8);
  CHECK(c.max_relative_positions == 64);  // -1 in the config: max_position_embeddings
  CHECK((c.c2p && c.p2c && c.share_att_key && c.rel_norm && !c.position_biased_input));
  CHECK(c.type_vocab == 0);
  check_sequence("deberta-v3");
}

TEST_CASE("transformers.reference.deberta_v2_f32") {
  const DebertaModel model(tt::fixture("deberta-v2-f32"));
  const auto& c = model.config();
  CHECK(c.embedding == 48);  // embed_proj to hidden 64
  CHECK((c.c2p && c.p2c && !c.share_att_key && !c.rel_norm && c.position_biased_input));
  CHECK(c.span() == 16);  // longer texts clamp their distances
  check_sequence("deberta-v2");
}

TEST_CASE("transformers.reference.deberta_relative_buckets") {
  // make_log_bucket_position for every distance of the fixture's config and of
  // deberta-v3-base's (256 buckets over 512 positions), computed in float32 as torch does.
  const auto ref = tt::reference(kReference);
  for (const auto& v : ref.at("buckets").as_array()) {
    const auto& table = v.as_object();
    const auto buckets = table.at("position_buckets").to_number<std::int64_t>();
    const auto max = table.at("max_relative_positions").to_number<std::int64_t>();
    auto distance = table.at("from").to_number<std::int64_t>();
    CAPTURE(buckets);
    std::size_t wrong = 0;
    for (const auto& want : table.at("bucket").as_array())
      wrong += relative_bucket(distance++, buckets, max) == want.to_number<std::int64_t>() ? 0 : 1;
    CHECK(wrong == 0);
  }
  CHECK(relative_bucket(-300, -1, -1) == -300);  // no buckets: the distance itself
}

TEST_CASE("transformers.reference.deberta_token_f32") {
  const auto ref = reference_model("deberta-v3-token");
  const auto dir = tt::fixture("deberta-v3-token-f32");
  const auto model = open_token_model(dir);
  CHECK(model->architecture() == "DebertaV2ForTokenClassification");
  const auto ids = tt::reference_ids(ref);
  std::vector<BertInput> inputs;
  for (const auto& i : ids) inputs.push_back({i, {}});
  std::vector<float> got;
  for (const auto& text : model->logits(inputs, 1)) got.insert(got.end(), text.begin(), text.end());
  const double gap = tt::max_abs_difference(got, tt::reference_logits(ref));
  MESSAGE("deberta-v3 token float32: max |logit − reference| = " << gap);
  CHECK(gap <= 1e-4);
  CHECK(std::string(model->describe().at("compute").as_string()).find("log buckets") !=
        std::string::npos);
}

TEST_CASE("transformers.reference.deberta_mixed_batch_equals_one_by_one") {
  for (const std::string name : {"deberta-v3", "deberta-v2"}) {
    CAPTURE(name);
    const auto dir = tt::fixture(name + "-f32");
    const DebertaModel model(dir);
    const auto batch = tt::run_reference_texts(model, dir, model.config().max_tokens(), kReference);
    tt::check_batch_equals_one_by_one(model, batch, 3);
  }
}

TEST_CASE("transformers.classifier: kind transformer runs a DeBERTa-v3 checkpoint") {
  tt::check_classifier_matches_reference("deberta-v3-f32", kReference, "deberta-v3",
                                         "DebertaV2ForSequenceClassification");
  const auto dir = tt::fixture("deberta-v3-f32");
  const auto inspected = learned::inspect_checkpoint(dir);
  CHECK(inspected.at("family").as_string() == "deberta-v2");
  CHECK(inspected.at("position_buckets").to_number<int>() == 8);
}

TEST_CASE("transformers.checkpoint: DeBERTa load errors name the file and key or tensor") {
  const auto dir = tt::copy_of("deberta-v2-f32", "deberta-bad");
  const auto config = dir + "/config.json";
  SUBCASE("a pos_att_type this library does not compute") {
    tt::set_config(dir, "pos_att_type", "p2c|p2p");
    CHECK(load_error(dir).find(config + "': pos_att_type 'p2p' is not supported (c2p, p2c)") !=
          std::string::npos);
  }
  SUBCASE("DeBERTa-v2 xlarge's convolution") {
    tt::set_config(dir, "conv_kernel_size", 3);
    CHECK(load_error(dir).find("conv_kernel_size > 0") != std::string::npos);
  }
  SUBCASE("an unknown norm_rel_ebd") {
    tt::set_config(dir, "norm_rel_ebd", "layer_norm|batch_norm");
    CHECK(load_error(dir).find("norm_rel_ebd 'batch_norm' is not supported") != std::string::npos);
  }
  SUBCASE("a pooler of another width") {
    tt::set_config(dir, "pooler_hidden_size", 32);
    CHECK(load_error(dir).find("pooler_hidden_size 32 is not hidden_size 64") != std::string::npos);
  }
  SUBCASE("a token classifier where a sequence classifier is wanted") {
    tt::set_config(dir, "architectures", json::array{"DebertaV2ForTokenClassification"});
    CHECK(load_error(dir).find("is a token classifier; this needs a sequence classifier") !=
          std::string::npos);
  }
  SUBCASE("rel_embeddings of another size than 2 × max_relative_positions") {
    tt::set_config(dir, "max_relative_positions", 8);
    CHECK(load_error(dir).find("deberta.encoder.rel_embeddings.weight") != std::string::npos);
  }
  SUBCASE("a missing position projection") {
    auto file = checkpoint::read_safetensors(dir + "/model.safetensors");
    file.tensors.erase("deberta.encoder.layer.1.attention.self.pos_key_proj.weight");
    tt::write_file(dir + "/model.safetensors", checkpoint::safetensors_bytes(file));
    CHECK(load_error(dir).find("deberta.encoder.layer.1.attention.self.pos_key_proj.weight") !=
          std::string::npos);
  }
  SUBCASE("a non-finite weight") {
    auto file = checkpoint::read_safetensors(dir + "/model.safetensors");
    file.tensors["deberta.encoder.layer.0.attention.self.query_proj.weight"].values[7] = NAN;
    tt::write_file(dir + "/model.safetensors", checkpoint::safetensors_bytes(file));
    CHECK(load_error(dir).find("query_proj.weight") != std::string::npos);
  }
  SUBCASE("a token type the model lacks") {
    const DebertaModel model(dir);
    const std::vector<std::int32_t> ids{2, 10, 3};
    const std::vector<std::uint32_t> types{0, 2, 0};
    const BertInput in{ids, types};
    CHECK_THROWS_WITH_AS(model.logits(std::span(&in, 1), 1),
                         doctest::Contains("token type 2 is outside the model's 2 types"),
                         classify::ClassifyError);
  }
  std::filesystem::remove_all(dir);
}

#endif  // MCPCLASS_WITH_LEARNED
