// Damaged and contradictory checkpoint directories: each is a load error naming the file and,
// where one is at fault, the tensor or config key, never a crash or a wrong answer.
#include "mcpclass/learned/learned_classifier.hpp"

#ifdef MCPCLASS_WITH_LEARNED

#include "architectures/bert/bert_model.hpp"
#include "checkpoint/safetensors.hpp"
#include "learned/safetensors_file.hpp"
#include "mcpclass/classify/errors.hpp"
#include "transformer_fixtures.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>

using namespace mcpclass::learned;
using mcpclass::classify::ClassifyError;
using namespace mcpclass::checkpoint;
using namespace mcpclass::architectures;
namespace json = boost::json;
namespace tt = transformer_test;

namespace {

std::string load_error(const std::string& dir) {
  return tt::load_error<BertSequenceModel>(dir);
}

using tt::set_config;

}  // namespace

TEST_CASE("transformers.checkpoint: a truncated model.safetensors names the file") {
  const auto dir = tt::copy_of("bert-f32", "truncated");
  const auto bytes = tt::read_file(dir + "/model.safetensors");
  tt::write_file(dir + "/model.safetensors", bytes.substr(0, bytes.size() / 2));
  const auto e = load_error(dir);
  CHECK(e.find(dir + "/model.safetensors") != std::string::npos);
  CHECK(e.find("do not match its shape or the file") != std::string::npos);
}

TEST_CASE("transformers.checkpoint: a header that lies about sizes names the file and tensor") {
  const auto dir = tt::copy_of("bert-f32", "lying");
  auto bytes = tt::read_file(dir + "/model.safetensors");
  SUBCASE("a header length past the end of the file") {
    const std::uint64_t huge = bytes.size() * 2;
    std::memcpy(bytes.data(), &huge, 8);
    tt::write_file(dir + "/model.safetensors", bytes);
    CHECK(load_error(dir).find("exceeds the file") != std::string::npos);
  }
  SUBCASE("a shape larger than the tensor's bytes") {
    const std::string from = R"("shape":[3,64])", to = R"("shape":[9,64])";
    const auto at = bytes.find(from);
    REQUIRE(at != std::string::npos);
    bytes.replace(at, from.size(), to);
    tt::write_file(dir + "/model.safetensors", bytes);
    const auto e = load_error(dir);
    CHECK(e.find("tensor 'classifier.weight' has data_offsets that do not match") !=
          std::string::npos);
  }
}

TEST_CASE("transformers.checkpoint: a missing tensor is named with its file") {
  const auto dir = tt::copy_of("bert-f32", "missing");
  auto file = read_safetensors(dir + "/model.safetensors");
  file.tensors.erase("bert.encoder.layer.1.output.dense.weight");
  detail::write_safetensors(dir + "/model.safetensors", file);
  CHECK(load_error(dir) == "'" + dir +
                               "/model.safetensors' has no tensor "
                               "'bert.encoder.layer.1.output.dense.weight'");
}

TEST_CASE("transformers.checkpoint: a config that contradicts the tensors names the tensor") {
  const auto dir = tt::copy_of("bert-f32", "contradicts");
  SUBCASE("hidden_size") {
    set_config(dir, "hidden_size", 32);
    CHECK(load_error(dir).find("tensor 'bert.embeddings.word_embeddings.weight' is 220×64, "
                               "expected 220×32") != std::string::npos);
  }
  SUBCASE("more labels than the head has") {
    set_config(dir, "id2label", json::object{{"0", "a"}, {"1", "b"}, {"2", "c"}, {"3", "d"}});
    CHECK(load_error(dir).find("tensor 'classifier.weight' is 3×64, expected 4×64") !=
          std::string::npos);
  }
  SUBCASE("a RoBERTa config over BERT tensors") {
    set_config(dir, "architectures", json::array{"RobertaForSequenceClassification"});
    set_config(dir, "model_type", "roberta");
    CHECK(load_error(dir).find("has no tensor 'roberta.embeddings.word_embeddings.weight'") !=
          std::string::npos);
  }
}

TEST_CASE("transformers.checkpoint: NaN weights are a load error naming the tensor") {
  const auto dir = tt::copy_of("bert-f32", "nan");
  auto file = read_safetensors(dir + "/model.safetensors");
  file.tensors.at("bert.encoder.layer.0.intermediate.dense.bias").values[5] =
      std::numeric_limits<float>::quiet_NaN();
  detail::write_safetensors(dir + "/model.safetensors", file);
  CHECK(load_error(dir).find("tensor 'bert.encoder.layer.0.intermediate.dense.bias' holds "
                             "non-finite values") != std::string::npos);
}

TEST_CASE("transformers.checkpoint: unsupported configs name the key") {
  const auto dir = tt::copy_of("bert-f32", "unsupported");
  SUBCASE("architecture") {
    set_config(dir, "architectures", json::array{"ElectraForSequenceClassification"});
    CHECK(load_error(dir).find("architecture 'ElectraForSequenceClassification' is not "
                               "supported") != std::string::npos);
  }
  SUBCASE("model_type against the architecture") {
    set_config(dir, "model_type", "roberta");
    CHECK(load_error(dir).find("model_type 'roberta' does not match") != std::string::npos);
  }
  SUBCASE("problem_type") {
    set_config(dir, "problem_type", "multi_label_classification");
    CHECK(load_error(dir).find("problem_type 'multi_label_classification' is not supported") !=
          std::string::npos);
  }
  SUBCASE("hidden_act") {
    set_config(dir, "hidden_act", "mish");
    CHECK(load_error(dir).find("hidden_act 'mish' is not supported") != std::string::npos);
  }
  SUBCASE("a size out of range") {
    set_config(dir, "num_hidden_layers", 1'000'000);
    CHECK(load_error(dir).find("num_hidden_layers must be an integer in [1, 1000]") !=
          std::string::npos);
  }
  SUBCASE("id2label with a gap") {
    set_config(dir, "id2label", json::object{{"0", "a"}, {"2", "c"}, {"3", "d"}});
    CHECK(load_error(dir).find("id2label key '3' is not a class id in [0, 3)") !=
          std::string::npos);
  }
  SUBCASE("a config.json larger than 4 MiB") {
    std::filesystem::resize_file(dir + "/config.json", 5 * 1024 * 1024);
    CHECK(load_error(dir).find("larger than 4 MiB") != std::string::npos);
  }
}

TEST_CASE("transformers.checkpoint: a sharded index is checked against its shards") {
  const auto dir = tt::copy_of("bert-f32", "index");
  std::filesystem::rename(dir + "/model.safetensors", dir + "/model-00001-of-00001.safetensors");
  auto write_index = [&](const json::object& map) {
    tt::write_file(dir + "/model.safetensors.index.json",
                   json::serialize(json::object{{"weight_map", map}}));
  };
  SUBCASE("a shard outside the directory") {
    write_index({{"classifier.bias", "../elsewhere.safetensors"}});
    CHECK(load_error(dir).find("maps tensor 'classifier.bias' to no shard file in its directory") !=
          std::string::npos);
  }
  SUBCASE("a tensor its shard lacks") {
    write_index({{"classifier.extra", "model-00001-of-00001.safetensors"}});
    CHECK(load_error(dir).find("has no tensor 'classifier.extra'") != std::string::npos);
  }
  SUBCASE("an index larger than 16 MiB") {
    write_index({});
    std::filesystem::resize_file(dir + "/model.safetensors.index.json", 17 * 1024 * 1024);
    CHECK(load_error(dir).find("larger than 16 MiB") != std::string::npos);
  }
  SUBCASE("no weights at all") {
    std::filesystem::remove(dir + "/model-00001-of-00001.safetensors");
    CHECK(load_error(dir).find("has neither model.safetensors nor") != std::string::npos);
  }
}

#endif  // MCPCLASS_WITH_LEARNED
