// Gemma 3 (embeddinggemma's layout: bidirectional, mean pooling, two Dense modules) and Qwen3
// (Qwen3-Embedding's: causal, last-token pooling) sentence-transformers directories against the
// PyTorch reference of tests/transformers/make_decoder_fixtures.py: token ids and embeddings with
// and without a prompt (and without the prompt's tokens in the pooling), Gemma causal, 2D
// Matryoshka cuts, batches against texts one by one, int8
// and bf16 on every kernel set, prompts chosen by name, inspection, damaged checkpoints refused by
// name, and an embedding_knn classifier over a fixture.
#include "mcpclass/learned/learned_classifier.hpp"

#ifdef MCPCLASS_WITH_LEARNED

#include "architectures/sentence_transformers/sentence_transformer_model.hpp"
#include "checkpoint/safetensors.hpp"
#include "kernels/cpu_features.hpp"
#include "mcpclass/config/config.hpp"
#include "mcpclass/learned/embedding_encoder.hpp"
#include "transformer_fixtures.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

using namespace mcpclass;
using namespace mcpclass::learned;
using mcpclass::classify::ClassifyError;
namespace json = boost::json;
namespace fs = std::filesystem;
namespace tt = transformer_test;

namespace {

const std::string kGemma = "gemma3-sentence";
const std::string kQwen = "qwen3-sentence";

json::object reference() {
  return tt::reference("decoder-sentence-reference.json");
}

json::object variant(const std::string& fixture, const std::string& name) {
  return reference().at(fixture).at(name).as_object();
}

std::vector<std::string> texts() {
  std::vector<std::string> out;
  const auto ref = reference();
  for (const auto& t : ref.at("texts").as_array()) out.emplace_back(t.as_string());
  return out;
}

EncoderOptions options_for(const std::string& dir, const std::string& prompt = {}) {
  EncoderOptions o;
  o.encoder_path = dir;
  o.max_tokens = 128;
  o.prompt = prompt;
  return o;
}

// The encoder of `options` against reference variant `name`: its token ids exactly and its
// embeddings within `bound`; returns the largest difference.
double check_variant(const EncoderOptions& options, const std::string& fixture,
                     const std::string& name, double bound) {
  const auto v = variant(fixture, name);
  const auto encoder = load_sentence_encoder(options);
  std::vector<std::vector<std::int32_t>> ids;
  for (const auto& t : texts()) ids.push_back(encoder->token_ids(t));
  CHECK(ids == tt::reference_ids(v));
  const double gap = tt::max_abs_difference(encoder->encode(texts()),
                                            tt::flat_rows(v.at("embeddings").as_array()));
  MESSAGE(fixture << " " << name << ": max |embedding − reference| = " << gap);
  CHECK(gap <= bound);
  return gap;
}

std::string load_error(const std::string& dir, const std::string& prompt = {}) {
  try {
    load_sentence_encoder(options_for(dir, prompt));
  } catch (const ClassifyError& e) {
    return e.what();
  }
  return "(loaded)";
}

double cosine(const float* a, const float* b, std::size_t n) {
  double dot = 0.0, na = 0.0, nb = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    dot += double{a[i]} * b[i];
    na += double{a[i]} * a[i];
    nb += double{b[i]} * b[i];
  }
  return dot / std::sqrt(na * nb);
}

}  // namespace

TEST_CASE("sentence transformers: Gemma 3 and Qwen3 decoders match the PyTorch reference") {
  for (const auto& fixture : {kGemma, kQwen}) {
    CAPTURE(fixture);
    const auto dir = tt::fixture(fixture);
    check_variant(options_for(dir), fixture, "plain", 1e-4);
    check_variant(options_for(dir, "query"), fixture, "query", 1e-4);
  }
  // The same Gemma weights with causal attention (use_bidirectional_attention false).
  const auto dir = tt::copy_of(kGemma, "decoder-causal");
  tt::set_json(dir + "/config.json", "use_bidirectional_attention", false);
  check_variant(options_for(dir), kGemma, "causal", 1e-4);
  fs::remove_all(dir);
  // Pooling's include_prompt false (INSTRUCTOR's): the prompt's tokens left out of the mean.
  const auto without = tt::copy_of(kGemma, "decoder-without-prompt");
  tt::set_json(without + "/1_Pooling/config.json", "include_prompt", false);
  check_variant(options_for(without, "query"), kGemma, "query_without_prompt", 1e-4);
  check_variant(options_for(without), kGemma, "plain", 1e-4);  // no prompt: nothing left out
  fs::remove_all(without);
}

TEST_CASE("sentence transformers: 2D Matryoshka layers and dimensions of a decoder") {
  for (const auto& fixture : {kGemma, kQwen}) {
    CAPTURE(fixture);
    const auto v = variant(fixture, "layers2_dims16");
    auto o = options_for(tt::fixture(fixture));
    o.layers = v.at("layers").to_number<std::size_t>();
    o.dimensions = v.at("dimensions").to_number<std::size_t>();
    check_variant(o, fixture, "layers2_dims16", 1e-4);
    const auto out = inspect_checkpoint(
        tt::fixture(fixture),
        {.adapter = {}, .tasks = {}, .layers = 2, .dimensions = 16, .prompt = {}});
    CHECK(std::string(out.at("compute").as_string()).find("no final RMSNorm") != std::string::npos);
    CHECK(out.at("dimensions") == json::object{{"kept", 16}, {"of", 32}});
  }
}

TEST_CASE("sentence transformers: a decoder batch equals its texts one by one") {
  for (const auto& fixture : {kGemma, kQwen}) {
    CAPTURE(fixture);
    auto o = options_for(tt::fixture(fixture), "query");
    o.batch_size = 4;  // several batches, shortest first, put back in input order
    const auto encoder = load_sentence_encoder(o);
    const auto all = texts();
    const auto batch = encoder->encode(all);
    std::vector<float> single;
    for (const auto& t : all) {
      const auto one = encoder->encode(std::span(&t, 1));
      single.insert(single.end(), one.begin(), one.end());
    }
    CHECK(batch == single);  // bit for bit
  }
}

TEST_CASE("sentence transformers: decoders in every precision on every kernel set") {
  using architectures::BertInput;
  using architectures::SentenceTransformerModel;
  const auto sets = kernels::runnable_kernel_sets(kernels::detect_cpu_features());
  for (const auto& fixture : {kGemma, kQwen}) {
    const auto v = variant(fixture, "plain");
    const auto want = tt::flat_rows(v.at("embeddings").as_array());
    const auto ids = tt::reference_ids(v);  // the inputs' spans point into it
    std::vector<BertInput> inputs;
    for (const auto& i : ids) inputs.push_back({i, {}});
    for (const auto precision :
         {kernels::Precision::f32, kernels::Precision::int8, kernels::Precision::bf16}) {
      std::vector<float> first;
      for (const auto set : sets) {
        // bf16 runs on the portable tile and the sets with a bf16 unit
        // (test_transformer_precision).
        if (precision == kernels::Precision::bf16 && set != kernels::KernelSet::portable &&
            set < kernels::KernelSet::avx512_bf16)
          continue;
        CAPTURE(fixture);
        CAPTURE(std::string(kernels::name(precision)));
        CAPTURE(std::string(kernels::name(set)));
        const SentenceTransformerModel model(tt::fixture(fixture), {}, {set, precision});
        const auto got = model.embeddings(inputs, 2, true);
        const std::size_t width = model.dimension();
        double worst = 1.0;
        for (std::size_t t = 0; t < inputs.size(); ++t)
          worst = std::min(worst, cosine(got.data() + t * width, want.data() + t * width, width));
        const double gap = tt::max_abs_difference(got, want);
        MESSAGE(fixture << " " << std::string(kernels::name(precision)) << " on "
                        << std::string(kernels::name(set)) << ": max |embedding − reference| = "
                        << gap << ", lowest cosine = " << worst);
        if (precision == kernels::Precision::f32) CHECK(gap <= 1e-4);
        CHECK(worst >= (precision == kernels::Precision::int8 ? 0.98 : 0.995));
        // Every set gives the portable set's bits, but AMX's bf16 unit, which orders its
        // additions its own way (bf16gemm_amx.cpp).
        if (first.empty())
          first = got;
        else if (!(precision == kernels::Precision::bf16 && set == kernels::KernelSet::amx))
          CHECK(got == first);
      }
    }
  }
}

TEST_CASE("sentence transformers: a decoder's prompt is chosen by name") {
  const auto dir = tt::copy_of(kQwen, "decoder-prompts");
  SUBCASE("an unknown name is refused naming the known ones") {
    CHECK(load_error(dir, "passage")
              .find("prompt 'passage' is not one of the prompts of '" + dir +
                    "' (document, query)") != std::string::npos);
  }
  SUBCASE("default_prompt_name applies when none is chosen") {
    tt::set_json(dir + "/config_sentence_transformers.json", "default_prompt_name", "query");
    check_variant(options_for(dir), kQwen, "query", 1e-4);
    // Another prompt is another embedding space: an index of one must not serve the other.
    CHECK(load_sentence_encoder(options_for(dir))->model_id() !=
          load_sentence_encoder(options_for(dir, "document"))->model_id());
  }
  SUBCASE("a default_prompt_name that names no prompt") {
    tt::set_json(dir + "/config_sentence_transformers.json", "default_prompt_name", "passage");
    CHECK(load_error(dir).find("default_prompt_name 'passage' is not one of the prompts") !=
          std::string::npos);
  }
  SUBCASE("the configuration keys") {
    const auto c =
        config::config_from_json(json::parse(R"({"categories": [{"name": "a", "description": "a"}],
          "classifier": {"kind": "embedding_knn", "encoder": "e", "examples": "x.jsonl",
                         "prompt": "query"}})")
                                     .as_object());
    CHECK(c.classifier.learned.prompt == "query");
    CHECK(c.classifier.learned.to_json("embedding_knn").at("prompt").as_string() == "query");
    const auto r = config::config_from_json(
        json::parse(R"({"routing": {"embedding_model": {"encoder": "e", "prompt": "query"}}})")
            .as_object());
    REQUIRE(r.router.embedding_model.has_value());
    CHECK(r.router.embedding_model->prompt == "query");
  }
  SUBCASE("an encoder that is not a sentence-transformers directory") {
    auto o = options_for(tt::fixture("bert-f32") + "/model.safetensors", "query");
    CHECK_THROWS_WITH_AS(load_sentence_encoder(o),
                         doctest::Contains("is not a sentence-transformers directory: prompt"),
                         ClassifyError);
  }
  fs::remove_all(dir);
}

TEST_CASE(
    "sentence transformers: a decoder's tokenizer may hold added tokens past its embeddings") {
  const auto dir = tt::copy_of(kGemma, "decoder-added-token");
  auto doc = json::parse(tt::read_file(dir + "/tokenizer.json")).as_object();
  const auto vocab = json::parse(tt::read_file(dir + "/config.json")).at("vocab_size").as_int64();
  doc["added_tokens"].as_array().push_back(json::object{{"id", vocab},
                                                        {"content", "<image_soft_token>"},
                                                        {"single_word", false},
                                                        {"lstrip", false},
                                                        {"rstrip", false},
                                                        {"normalized", false},
                                                        {"special", true}});
  tt::write_file(dir + "/tokenizer.json", json::serialize(doc));
  const auto encoder = load_sentence_encoder(options_for(dir));
  CHECK(encoder->encode(texts()) ==
        load_sentence_encoder(options_for(tt::fixture(kGemma)))->encode(texts()));
  const std::string image = "look: <image_soft_token>";
  const auto outside = "token id " + std::to_string(vocab) + " is outside";
  CHECK_THROWS_WITH_AS(encoder->encode(std::span(&image, 1)), doctest::Contains(outside.c_str()),
                       ClassifyError);
  fs::remove_all(dir);
}

TEST_CASE("sentence transformers: model inspect describes a Gemma 3 and a Qwen3 directory") {
  const auto gemma = inspect_checkpoint(
      tt::fixture(kGemma),
      {.adapter = {}, .tasks = {}, .layers = 0, .dimensions = 0, .prompt = "query"});
  CHECK(gemma.at("architecture").as_string() == "Gemma3TextModel");
  CHECK(gemma.at("family").as_string() == "gemma3");
  CHECK(gemma.at("num_attention_heads").to_number<int>() == 4);
  CHECK(gemma.at("num_key_value_heads").to_number<int>() == 2);
  CHECK(gemma.at("head_dim").to_number<int>() == 16);
  CHECK(gemma.at("attention").as_string() == "bidirectional");
  CHECK(gemma.at("sliding_window").to_number<int>() == 8);
  CHECK(gemma.at("sliding_layers").to_number<int>() == 2);
  CHECK(gemma.at("pooling").as_string() == "mean");
  CHECK(gemma.at("dense").as_array().size() == 2);
  CHECK(gemma.at("dense").as_array()[0].as_string() == "32 → 64, no bias, Identity");
  CHECK(gemma.at("prompt").as_string() == "task: search result | query: ");
  CHECK(gemma.at("prompts").as_object().size() == 3);
  CHECK(gemma.at("default_prompt_name").is_null());
  CHECK(gemma.at("tokenizer").at("model").as_string() == "BPE");
  CHECK(std::string(gemma.at("compute").as_string()).find("a Dense 64 → 32, Tanh") !=
        std::string::npos);
  const auto qwen = inspect_checkpoint(tt::fixture(kQwen));
  CHECK(qwen.at("architecture").as_string() == "Qwen3Model");
  CHECK(qwen.at("attention").as_string() == "causal");
  CHECK(qwen.at("pooling").as_string() == "lasttoken");
  CHECK(qwen.at("sliding_layers").to_number<int>() == 2);  // from max_window_layers 1
  CHECK(qwen.at("prompt").as_string().empty());
  CHECK(std::string(qwen.at("compute").as_string()).find("causal grouped-query attention") !=
        std::string::npos);
}

TEST_CASE("sentence transformers: a damaged decoder checkpoint is refused by name") {
  for (const auto& fixture : {kGemma, kQwen}) {
    CAPTURE(fixture);
    const auto dir = tt::copy_of(fixture, "decoder-bad");
    const auto weights = dir + "/model.safetensors";
    auto file = checkpoint::read_safetensors(weights);
    SUBCASE("a missing tensor") {
      file.tensors.erase("layers.1.self_attn.k_norm.weight");
      tt::write_file(weights, checkpoint::safetensors_bytes(file));
      CHECK(load_error(dir).find("layers.1.self_attn.k_norm.weight") != std::string::npos);
    }
    SUBCASE("a tensor of the wrong shape") {
      auto& t = file.tensors.at("layers.0.self_attn.k_proj.weight");
      t.shape = {64, 32};  // as many key heads as query heads: not this config's 2
      t.values.resize(64 * 32, 0.0f);
      tt::write_file(weights, checkpoint::safetensors_bytes(file));
      CHECK(load_error(dir).find("layers.0.self_attn.k_proj.weight") != std::string::npos);
    }
    SUBCASE("a tensor no part of the model takes") {
      file.tensors["layers.0.self_attn.q_proj.bias"] = {{64}, std::vector<float>(64, 0.0f)};
      tt::write_file(weights, checkpoint::safetensors_bytes(file));
      CHECK(load_error(dir).find("tensor 'layers.0.self_attn.q_proj.bias' is not part of a") !=
            std::string::npos);
    }
    SUBCASE("saved from a causal LM: model. names and a tied lm_head load the same") {
      checkpoint::SafeTensors prefixed;
      for (auto& [name, t] : file.tensors) prefixed.tensors["model." + name] = t;
      prefixed.tensors["lm_head.weight"] = file.tensors.at("embed_tokens.weight");
      tt::write_file(weights, checkpoint::safetensors_bytes(prefixed));
      CHECK(load_sentence_encoder(options_for(dir))->encode(texts()) ==
            load_sentence_encoder(options_for(tt::fixture(fixture)))->encode(texts()));
    }
    SUBCASE("an unknown activation") {
      const auto key = fixture == kGemma ? "hidden_activation" : "hidden_act";
      tt::set_config(dir, key, "mish");
      CHECK(load_error(dir).find(std::string(key) + " 'mish' is not supported") !=
            std::string::npos);
    }
    SUBCASE("an unknown rope_scaling type") {
      tt::set_config(dir, "rope_scaling", json::object{{"rope_type", "longrope"}});
      CHECK(load_error(dir).find("config.json': rope_scaling.rope_type 'longrope' is not "
                                 "supported (default, linear, yarn)") != std::string::npos);
    }
    SUBCASE("key/value heads that do not divide the heads") {
      tt::set_config(dir, "num_key_value_heads", 3);
      CHECK(load_error(dir).find("num_attention_heads 4 is not a multiple of "
                                 "num_key_value_heads 3") != std::string::npos);
    }
    SUBCASE("layer_types of the wrong length") {
      tt::set_config(dir, "layer_types", json::array{"full_attention"});
      CHECK(load_error(dir).find("layer_types must list 3 layers") != std::string::npos);
    }
    fs::remove_all(dir);
  }
  const auto dir = tt::copy_of(kGemma, "decoder-bad-gemma");
  SUBCASE("attention logit softcapping") {
    tt::set_config(dir, "attn_logit_softcapping", 50.0);
    CHECK(load_error(dir).find("attn_logit_softcapping is not supported") != std::string::npos);
  }
  SUBCASE("a Dense of an unknown activation") {
    tt::set_json(dir + "/3_Dense/config.json", "activation_function",
                 "torch.nn.modules.activation.ReLU");
    CHECK(load_error(dir).find("3_Dense/config.json': activation_function "
                               "'torch.nn.modules.activation.ReLU' is not supported") !=
          std::string::npos);
  }
  SUBCASE("a Dense whose in_features is not the width before it") {
    tt::set_json(dir + "/3_Dense/config.json", "in_features", 32);
    CHECK(load_error(dir).find("in_features 32 is not the width before it, 64") !=
          std::string::npos);
  }
  SUBCASE("a Dense without its bias") {
    auto t = checkpoint::read_safetensors(dir + "/3_Dense/model.safetensors");
    t.tensors.erase("linear.bias");
    tt::write_file(dir + "/3_Dense/model.safetensors", checkpoint::safetensors_bytes(t));
    CHECK(load_error(dir).find("linear.bias") != std::string::npos);
  }
  fs::remove_all(dir);
}

TEST_CASE("sentence transformers: embedding_knn over a Qwen3 directory with a prompt classifies") {
  const auto dir = tt::copy_of(kQwen, "decoder-knn");
  const std::vector<std::pair<std::string, std::string>> examples = {
      {"write a python function to sort a list", "code"},
      {"compile, test, build, deploy: the server keeps crashing", "code"},
      {"solve the equation x + 2 = 5", "math"},
      {"prove that there are infinitely many primes", "math"},
      {"tell me a joke about cats", "chat"},
      {"hello!", "chat"},
  };
  {
    std::ofstream out(dir + "/examples.jsonl");
    for (const auto& [text, category] : examples)
      out << json::serialize(json::object{{"text", text}, {"category", category}}) << "\n";
  }
  auto c = config::config_from_json(json::parse(R"({"categories": [
      {"name": "code", "description": "code"}, {"name": "math", "description": "math"},
      {"name": "chat", "description": "chat"}],
      "classifier": {"kind": "embedding_knn", "encoder": "e", "examples": "x", "k": 1,
                     "prompt": "query"}})")
                                        .as_object());
  c.classifier.learned.encoder = dir;
  c.classifier.learned.examples = dir + "/examples.jsonl";
  c.classifier.learned.index = dir + "/index.hnsw";
  const auto classifier = config::make_classifier(c);
  CHECK(classifier->info().at("index_size").to_number<std::size_t>() == examples.size());
  for (const auto& [text, category] : examples) {
    CAPTURE(text);
    CHECK(classifier->classify(text, {true}).category == category);
  }
  fs::remove_all(dir);
}

#endif  // MCPCLASS_WITH_LEARNED
