// A sentence-transformers model directory as the encoder of the learned classifiers, against the
// PyTorch reference of tests/transformers/make_sentence_fixtures.py: every pooling mode,
// Normalize on and off, truncation at max_seq_length, batches of mixed lengths, embedding_knn
// and trained_head classifiers configured over the directory, inspection and bad directories;
// a ModernBERT (mmBERT) base model, and 2D Matryoshka (layers and dimensions) over both.
#include "mcpclass/learned/learned_classifier.hpp"

#ifdef MCPCLASS_WITH_LEARNED

#include "architectures/sentence_transformers/sentence_transformer_model.hpp"
#include "checkpoint/safetensors.hpp"
#include "kernels/cpu_features.hpp"
#include "mcpclass/classify/classification.hpp"
#include "mcpclass/config/config.hpp"
#include "mcpclass/learned/embedding_encoder.hpp"
#include "mcpclass/learned/learned_settings.hpp"
#include "transformer_fixtures.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <map>

using namespace mcpclass;
using namespace mcpclass::learned;
using mcpclass::classify::ClassifyError;
using namespace mcpclass::architectures;
namespace json = boost::json;
namespace fs = std::filesystem;

namespace {

const std::string kFixture = "minilm-sentence";
const std::string kModern = "mmbert-sentence";  // ModernBertModel (mmBERT-like), mean, Normalize

json::object reference() {
  return transformer_test::reference("sentence_reference.json");
}

json::object reference_of(const std::string& fixture) {
  return transformer_test::reference(fixture == kModern ? "mmbert-sentence-reference.json"
                                                        : "sentence_reference.json");
}

std::vector<std::string> reference_texts() {
  std::vector<std::string> out;
  const auto ref = reference();
  for (const auto& t : ref.at("texts").as_array()) out.emplace_back(t.as_string());
  return out;
}

// A copy of the fixture whose Pooling config and modules.json are those of reference variant
// `name` (the committed fixture is mean_normalize).
std::string variant_dir(const std::string& name) {
  const auto dir = transformer_test::copy_of(kFixture, "sentence-" + name);
  const auto v = reference().at("variants").at(name).as_object();
  transformer_test::write_file(dir + "/1_Pooling/config.json",
                               json::serialize(v.at("pooling").as_object()));
  json::array modules = json::parse(transformer_test::read_file(dir + "/modules.json")).as_array();
  if (!v.at("normalize").as_bool()) modules.pop_back();
  transformer_test::write_file(dir + "/modules.json", json::serialize(modules));
  return dir;
}

EncoderOptions options_for(const std::string& dir) {
  EncoderOptions o;
  o.encoder_path = dir;
  o.max_tokens = 128;
  return o;
}

std::vector<BertInput> inputs_of(const std::vector<std::vector<std::int32_t>>& ids) {
  std::vector<BertInput> out;
  for (const auto& i : ids) out.push_back({i, {}});
  return out;
}

// The message of the ClassifyError loading `dir` throws, or "(loaded)".
std::string load_error(const std::string& dir) {
  try {
    const SentenceTransformerModel model(dir);
  } catch (const ClassifyError& e) {
    return e.what();
  }
  return "(loaded)";
}

}  // namespace

TEST_CASE("sentence transformers: token ids and embeddings of every pooling match the reference") {
  const auto ref = reference();
  const auto want_ids = transformer_test::reference_ids(ref);
  const auto encoder = load_sentence_encoder(options_for(transformer_test::fixture(kFixture)));
  std::vector<std::vector<std::int32_t>> ids;
  for (const auto& t : reference_texts()) ids.push_back(encoder->token_ids(t));
  CHECK(ids == want_ids);  // stripped, tokenized, truncated at max_seq_length 48
  CHECK(ids.back().size() == 48);
  for (const auto& [name, value] : ref.at("variants").as_object()) {
    CAPTURE(name);
    const auto dir = variant_dir(name);
    const SentenceTransformerModel model(dir);
    const auto& v = value.as_object();
    CHECK(model.config().normalize == v.at("normalize").as_bool());
    CHECK(model.max_tokens() == 48);
    const auto want = transformer_test::flat_rows(v.at("embeddings").as_array());
    CHECK(model.dimension() * ids.size() == want.size());
    const auto got = model.embeddings(inputs_of(ids), 1, model.config().normalize);
    const double gap = transformer_test::max_abs_difference(got, want);
    MESSAGE(name << ": max |embedding − reference| = " << gap);
    CHECK(gap <= 1e-4);
    fs::remove_all(dir);
  }
  // The encoder of the classifiers gives the published output (mean, Normalize).
  const auto texts = reference_texts();
  const double gap = transformer_test::max_abs_difference(
      encoder->encode(texts),
      transformer_test::flat_rows(
          ref.at("variants").at("mean_normalize").at("embeddings").as_array()));
  MESSAGE("encoder: max |embedding − reference| = " << gap);
  CHECK(gap <= 1e-4);
  CHECK(encoder->dimension() == 64);
}

TEST_CASE("sentence transformers: a ModernBERT (mmBERT) base model matches the reference") {
  const auto ref = reference_of(kModern);
  const auto encoder = load_sentence_encoder(options_for(transformer_test::fixture(kModern)));
  const auto texts = reference_texts();
  std::vector<std::vector<std::int32_t>> ids;
  for (const auto& t : texts) ids.push_back(encoder->token_ids(t));
  CHECK(ids == transformer_test::reference_ids(ref));
  const auto got = encoder->encode(texts);
  const double gap = transformer_test::max_abs_difference(
      got, transformer_test::flat_rows(
               ref.at("variants").at("mean_normalize").at("embeddings").as_array()));
  MESSAGE("ModernBERT encoder: max |embedding − reference| = " << gap);
  CHECK(gap <= 1e-4);
  CHECK(encoder->dimension() == 64);
  std::vector<float> single;
  for (const auto& t : texts) {
    const auto one = encoder->encode(std::span(&t, 1));
    single.insert(single.end(), one.begin(), one.end());
  }
  CHECK(got == single);  // bit for bit
  const auto out = inspect_checkpoint(transformer_test::fixture(kModern));
  CHECK(out.at("architecture").as_string() == "ModernBertModel");
  CHECK(out.at("family").as_string() == "modernbert");
  CHECK(out.at("layers").at("computed").to_number<int>() == 3);
  CHECK(std::string(out.at("compute").as_string()).find("final LayerNorm, then the mean") !=
        std::string::npos);
}

TEST_CASE("sentence transformers: 2D Matryoshka layers and dimensions match the reference") {
  const auto texts = reference_texts();
  for (const auto& fixture : {kFixture, kModern}) {
    const auto ref = reference_of(fixture);
    const auto full = load_sentence_encoder(options_for(transformer_test::fixture(fixture)));
    for (const auto& [name, value] : ref.at("matryoshka").as_object()) {
      CAPTURE(fixture);
      CAPTURE(name);
      const auto& v = value.as_object();
      auto o = options_for(transformer_test::fixture(fixture));
      o.layers = v.at("layers").to_number<std::size_t>();
      o.dimensions = v.at("dimensions").to_number<std::size_t>();
      o.batch_size = 5;
      const auto encoder = load_sentence_encoder(o);
      CHECK(encoder->dimension() == (o.dimensions == 0 ? 64 : o.dimensions));
      const auto got = encoder->encode(texts);
      const double gap = transformer_test::max_abs_difference(
          got, transformer_test::flat_rows(v.at("embeddings").as_array()));
      MESSAGE(fixture << " " << name << ": max |embedding − reference| = " << gap);
      CHECK(gap <= 1e-4);
      const auto first = encoder->encode(std::span(texts.data(), 1));
      CHECK(std::equal(first.begin(), first.end(), got.begin()));  // batch = one by one
      // Another embedding space: an index or a cache of the full model must not serve it,
      // except for the cut that is the whole model (layers3_dims48 cuts dimensions only).
      CHECK(encoder->model_id() != full->model_id());
    }
  }
}

TEST_CASE("sentence transformers: Matryoshka settings are checked and shown") {
  auto o = options_for(transformer_test::fixture(kFixture));
  SUBCASE("more layers than the model has") {
    o.layers = 3;
    CHECK_THROWS_WITH_AS(load_sentence_encoder(o),
                         doctest::Contains("layers 3 is more than the 2 of"), ClassifyError);
  }
  SUBCASE("more dimensions than the embedding has") {
    o.dimensions = 65;
    CHECK_THROWS_WITH_AS(load_sentence_encoder(o),
                         doctest::Contains("dimensions 65 is more than the 64 of"), ClassifyError);
  }
  SUBCASE("the whole model is the model") {
    o.layers = 2;
    o.dimensions = 64;
    CHECK(load_sentence_encoder(o)->model_id() ==
          load_sentence_encoder(options_for(transformer_test::fixture(kFixture)))->model_id());
  }
  SUBCASE("an encoder that is not a sentence-transformers directory") {
    o.encoder_path = transformer_test::fixture("bert-f32") + "/model.safetensors";
    o.layers = 1;
    CHECK_THROWS_WITH_AS(load_sentence_encoder(o),
                         doctest::Contains("is not a sentence-transformers directory: layers "
                                           "and dimensions"),
                         ClassifyError);
  }
  SUBCASE("the configuration keys") {
    const auto doc = [](const char* extra) {
      return json::parse(std::string(R"({"categories": [{"name": "a", "description": "a"}],
          "classifier": {"kind": "trained_head", "encoder": "e", "head": "h")") +
                         extra + "}}")
          .as_object();
    };
    const auto c = config::config_from_json(doc(R"(, "layers": 2, "dimensions": 16)"));
    CHECK(c.classifier.learned.layers == 2);
    CHECK(c.classifier.learned.dimensions == 16);
    CHECK(c.classifier.learned.to_json("trained_head").at("dimensions").to_number<int>() == 16);
    CHECK_THROWS_WITH_AS(config::config_from_json(doc(R"(, "layers": 0)")),
                         doctest::Contains("classifier.layers"), classify::ConfigError);
    CHECK_THROWS_WITH_AS(config::config_from_json(doc(R"(, "dimensions": "all")")),
                         doctest::Contains("classifier.dimensions"), classify::ConfigError);
  }
  SUBCASE("model inspect says what was chosen") {
    const auto out = inspect_checkpoint(
        transformer_test::fixture(kModern),
        {.adapter = {}, .tasks = {}, .layers = 2, .dimensions = 32, .prompt = {}});
    CHECK(out.at("layers") == json::object{{"computed", 2}, {"of", 3}});
    CHECK(out.at("dimensions") == json::object{{"kept", 32}, {"of", 64}});
    CHECK(out.at("dimension").to_number<int>() == 32);
    CHECK(std::string(out.at("compute").as_string()).find("no final LayerNorm") !=
          std::string::npos);
    CHECK_THROWS_WITH_AS(
        inspect_checkpoint(
            transformer_test::fixture("bert-f32"),
            {.adapter = {}, .tasks = {}, .layers = 1, .dimensions = 0, .prompt = {}}),
        doctest::Contains("--layers, --dimensions and --prompt apply to sentence encoders"),
        ClassifyError);
  }
}

TEST_CASE(
    "sentence transformers: a ModernBERT base saved with model. names loads, a damaged one is "
    "refused") {
  const auto dir = transformer_test::copy_of(kModern, "sentence-modern");
  const auto weights = dir + "/model.safetensors";
  auto file = checkpoint::read_safetensors(weights);
  SUBCASE("saved from a model with a head: model.* names and a head tensor") {
    checkpoint::SafeTensors prefixed;
    for (auto& [name, t] : file.tensors) prefixed.tensors["model." + name] = t;
    prefixed.tensors["head.dense.weight"] = {{64, 64}, std::vector<float>(64 * 64, 0.5f)};
    transformer_test::write_file(weights, checkpoint::safetensors_bytes(prefixed));
    const auto got = load_sentence_encoder(options_for(dir))->encode(reference_texts());
    const auto want = load_sentence_encoder(options_for(transformer_test::fixture(kModern)))
                          ->encode(reference_texts());
    CHECK(got == want);
  }
  SUBCASE("a missing tensor") {
    file.tensors.erase("layers.1.mlp.Wi.weight");
    transformer_test::write_file(weights, checkpoint::safetensors_bytes(file));
    CHECK(load_error(dir).find("layers.1.mlp.Wi.weight") != std::string::npos);
  }
  SUBCASE("a bias the config says the model lacks") {
    transformer_test::set_config(dir, "mlp_bias", false);
    CHECK(load_error(dir).find("is not part of a ModernBertModel") != std::string::npos);
  }
  SUBCASE("a representation_contract: early exits final_norm'ed, or an unknown one refused") {
    transformer_test::set_config(
        dir, "representation_contract",
        json::object{{"version", 1}, {"intermediate_normalization", "final_norm"}});
    const auto out = inspect_checkpoint(
        dir, {.adapter = {}, .tasks = {}, .layers = 2, .dimensions = 0, .prompt = {}});
    CHECK(std::string(out.at("compute").as_string()).find("final LayerNorm, then") !=
          std::string::npos);
    auto o = options_for(dir);
    o.layers = 2;
    auto plain = options_for(transformer_test::fixture(kModern));
    plain.layers = 2;
    CHECK(load_sentence_encoder(o)->encode(reference_texts()) !=
          load_sentence_encoder(plain)->encode(reference_texts()));
    transformer_test::set_config(dir, "representation_contract",
                                 json::object{{"intermediate_normalization", "layer_norm"}});
    CHECK(load_error(dir).find("representation_contract.intermediate_normalization 'layer_norm' "
                               "is not supported (none, final_norm)") != std::string::npos);
  }
  SUBCASE("another model type") {
    transformer_test::set_config(dir, "model_type", "deberta-v2");
    CHECK(load_error(dir).find("architecture 'ModernBertModel' is not supported") !=
          std::string::npos);
  }
  fs::remove_all(dir);
}

TEST_CASE("sentence transformers: a batch of mixed lengths equals the texts one by one") {
  const auto texts = reference_texts();
  for (const std::string name : {"mean_normalize", "cls", "all"}) {
    CAPTURE(name);
    const auto dir = variant_dir(name);
    EncoderOptions o = options_for(dir);
    o.batch_size = 7;  // several batches, shortest first, put back in input order
    const auto encoder = load_sentence_encoder(o);
    const auto batch = encoder->encode(texts);
    std::vector<float> single;
    for (const auto& t : texts) {
      const auto one = encoder->encode(std::span(&t, 1));
      single.insert(single.end(), one.begin(), one.end());
    }
    CHECK(batch == single);  // bit for bit
    std::vector<std::vector<std::int32_t>> ids;
    for (const auto& t : texts) ids.push_back(encoder->token_ids(t));
    CHECK(encoder->encode_tokens(ids) == batch);
    fs::remove_all(dir);
  }
}

TEST_CASE("sentence transformers: the encoder's vectors are unit vectors without Normalize too") {
  const auto dir = variant_dir("mean");
  const auto encoder = load_sentence_encoder(options_for(dir));
  const auto v = encoder->encode(reference_texts());
  for (std::size_t r = 0; r < v.size() / 64; ++r) {
    double norm = 0.0;
    for (std::size_t j = 0; j < 64; ++j) norm += static_cast<double>(v[r * 64 + j]) * v[r * 64 + j];
    CHECK(norm == doctest::Approx(1.0).epsilon(1e-5));
  }
  fs::remove_all(dir);
}

TEST_CASE("sentence transformers: model inspect describes the directory") {
  const auto out = inspect_checkpoint(transformer_test::fixture(kFixture));
  CHECK(out.at("architecture").as_string() == "BertModel");
  CHECK(out.at("pooling").as_string() == "mean");
  CHECK(out.at("normalize").as_bool());
  CHECK(out.at("dimension").to_number<int>() == 64);
  CHECK(out.at("max_tokens").to_number<int>() == 48);
  CHECK(out.at("tokenizer").at("model").as_string() == "WordPiece");
  CHECK(std::string(out.at("compute").as_string()).find("mean pooling") != std::string::npos);
}

namespace {

// Three labelled texts of every category of training_data.csv.
std::vector<LabelledExample> few_examples() {
  const auto all = read_labelled_examples(MCPCLASS_SOURCE_DIR "/tests/data/training_data.csv");
  std::map<std::string, int> taken;
  std::vector<LabelledExample> out;
  for (const auto& e : all)
    if (taken[e.category]++ < 3) out.push_back(e);
  return out;
}

}  // namespace

TEST_CASE("sentence transformers: embedding_knn over the directory classifies its examples") {
  const auto dir = transformer_test::copy_of(kFixture, "sentence-knn");
  const auto examples = few_examples();
  {
    std::ofstream out(dir + "/examples.jsonl");
    for (const auto& e : examples)
      out << json::serialize(json::object{{"text", e.text}, {"category", e.category}}) << "\n";
  }
  auto c = config::default_config();
  c.classifier.kind = "embedding_knn";
  c.classifier.learned.encoder = dir;
  c.classifier.learned.examples = dir + "/examples.jsonl";
  c.classifier.learned.index = dir + "/index.hnsw";
  c.classifier.learned.k = 1;
  const auto classifier = config::make_classifier(c);
  CHECK(classifier->info().at("index_size").to_number<std::size_t>() == examples.size());
  std::size_t correct = 0;
  for (const auto& e : examples)
    correct += classifier->classify(e.text, {true}).category == e.category ? 1 : 0;
  MESSAGE("embedding_knn over the directory: " << correct << "/" << examples.size());
  CHECK(correct == examples.size());
  fs::remove_all(dir);
}

TEST_CASE("sentence transformers: a head trained over the directory serves as trained_head") {
  const auto dir = transformer_test::copy_of(kFixture, "sentence-head");
  const auto examples = few_examples();
  auto c = config::default_config();
  c.classifier.kind = "trained_head";
  c.classifier.learned.encoder = dir;
  c.classifier.learned.head = dir + "/head.pt";
  HeadTrainingOptions options;
  options.epochs = 300;
  options.learning_rate = 3e-2;
  const auto report =
      train_head(c.categories, c.classifier.learned, examples, dir + "/head.pt", options);
  CHECK(report.train_rows + report.validation_rows >= examples.size());
  const auto classifier = config::make_classifier(c);
  CHECK(classifier->kind() == "trained_head");
  std::size_t correct = 0;
  for (const auto& e : examples)
    correct += classifier->classify(e.text, {true}).category == e.category ? 1 : 0;
  MESSAGE("trained_head over the directory, its training texts: " << correct << "/"
                                                                  << examples.size());
  CHECK(correct >= examples.size() - 2);  // the validation rows were held out of training
  fs::remove_all(dir);
}

TEST_CASE("sentence transformers: a bad directory is a load error naming the file and key") {
  const auto dir = transformer_test::copy_of(kFixture, "sentence-bad");
  const auto pooling = dir + "/1_Pooling/config.json";
  const auto modules = dir + "/modules.json";
  const auto original_modules = transformer_test::read_file(modules);
  SUBCASE("an unknown pooling key") {
    transformer_test::set_json(pooling, "pooling_mode_attention_tokens", true);
    CHECK(
        load_error(dir).find(pooling + "': unknown pooling key 'pooling_mode_attention_tokens'") !=
        std::string::npos);
  }
  SUBCASE("an unknown pooling_mode") {
    transformer_test::set_json(pooling, "pooling_mode", "median");
    CHECK(load_error(dir).find("pooling_mode 'median' is not a pooling mode") != std::string::npos);
  }
  SUBCASE("no pooling mode") {
    transformer_test::set_json(pooling, "pooling_mode_mean_tokens", false);
    CHECK(load_error(dir).find("no pooling_mode_* is true") != std::string::npos);
  }
  SUBCASE("a word_embedding_dimension other than hidden_size") {
    transformer_test::set_json(pooling, "word_embedding_dimension", 384);
    CHECK(load_error(dir).find(pooling + "': word_embedding_dimension 384 is not the "
                                         "Transformer's hidden_size 64") != std::string::npos);
  }
  SUBCASE("no Pooling module") {
    auto m = json::parse(original_modules).as_array();
    m.erase(m.begin() + 1, m.end());
    transformer_test::write_file(modules, json::serialize(m));
    CHECK(load_error(dir).find(modules +
                               "': modules[1] must be sentence_transformers.models.Pooling") !=
          std::string::npos);
  }
  SUBCASE("a module this library does not compute") {
    auto m = json::parse(original_modules).as_array();
    m[2].as_object()["type"] = "sentence_transformers.models.LayerNorm";
    transformer_test::write_file(modules, json::serialize(m));
    CHECK(load_error(dir).find("modules[2] is 'sentence_transformers.models.LayerNorm'") !=
          std::string::npos);
  }
  SUBCASE("a module path outside the directory") {
    auto m = json::parse(original_modules).as_array();
    m[1].as_object()["path"] = "../elsewhere";
    transformer_test::write_file(modules, json::serialize(m));
    CHECK(load_error(dir).find("modules[1].path '../elsewhere' leaves the model directory") !=
          std::string::npos);
  }
  SUBCASE("modules.json is not a list") {
    transformer_test::write_file(modules, "{}");
    CHECK(load_error(dir).find(modules + "': must be a non-empty list of modules") !=
          std::string::npos);
  }
  SUBCASE("no sentence_bert_config.json") {
    fs::remove(dir + "/sentence_bert_config.json");
    CHECK(load_error(dir).find("sentence_bert_config.json': is missing") != std::string::npos);
  }
  SUBCASE("a Transformer that is not a base model") {
    transformer_test::set_config(dir, "architectures",
                                 json::array{"BertForSequenceClassification"});
    CHECK(load_error(dir).find("is a sequence classifier; this needs a base model") !=
          std::string::npos);
  }
  SUBCASE("a missing tensor") {
    const auto bytes =
        transformer_test::read_file(transformer_test::fixture(kFixture) + "/model.safetensors");
    // Renaming the tensor in the header keeps the file valid but without it.
    auto renamed = bytes;
    const auto at = renamed.find("encoder.layer.1.output.dense.weight");
    REQUIRE(at != std::string::npos);
    renamed[at] = 'X';
    transformer_test::write_file(dir + "/model.safetensors", renamed);
    CHECK(load_error(dir).find("encoder.layer.1.output.dense.weight") != std::string::npos);
  }
  SUBCASE("precision bf16") {
    auto o = options_for(dir);
    o.precision = EncoderPrecision::bf16;
    // The kernel set this run gives a model (MCPCLASS_KERNELS may cap it below bf16's).
    const auto set = kernels::choose_kernel_set(kernels::detect_cpu_features(), "");
    if (set < kernels::KernelSet::avx512_bf16) {
      CHECK_THROWS_WITH_AS(load_sentence_encoder(o), doctest::Contains("precision bf16"),
                           ClassifyError);
    } else {
      // Where the CPU runs it, bf16 loads and its unit vectors stay near float32's.
      const auto bf16 = load_sentence_encoder(o);
      const auto f32 = load_sentence_encoder(options_for(dir));
      const auto texts = reference_texts();
      const auto a = bf16->encode(texts), b = f32->encode(texts);
      REQUIRE(a.size() == b.size());
      const std::size_t width = a.size() / texts.size();
      for (std::size_t t = 0; t < texts.size(); ++t) {
        double dot = 0.0;
        for (std::size_t j = 0; j < width; ++j) dot += double{a[t * width + j]} * b[t * width + j];
        CHECK(dot >= 0.99);
      }
    }
  }
  fs::remove_all(dir);
}

#endif  // MCPCLASS_WITH_LEARNED
