// Learned-classifier plumbing that needs no model: settings schema, the kNN vote formula, the
// example reader and split, checksums and atomic writes. Runs with MCPCLASS_WITH_LEARNED on or off.
#include "learned/knn_vote.hpp"
#include "mcpclass/classify/errors.hpp"
#include "mcpclass/config/config.hpp"
#include "mcpclass/learned/learned_classifier.hpp"
#include "mcpclass/learned/learned_examples.hpp"
#include "mcpclass/learned/learned_settings.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <sstream>

using namespace mcpclass::learned;
using mcpclass::classify::ClassifyError;
using mcpclass::classify::ConfigError;
namespace config = mcpclass::config;

namespace {

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("mcpclass-learned-" + name)).string();
}

}  // namespace

TEST_CASE("learned settings: strict schema per kind, round trip through the config document") {
  const auto c = config::parse_config(R"({"categories":[{"name":"a"},{"name":"b"}],
    "classifier":{"kind":"embedding_knn","examples":"x.csv","k":5,"temperature":0.1}})");
  CHECK(c.classifier.kind == "embedding_knn");
  CHECK(c.classifier.learned.examples == "x.csv");
  CHECK(c.classifier.learned.k == 5);
  CHECK(c.classifier.learned.temperature == doctest::Approx(0.1));
  CHECK(c.classifier.learned.encoder == "cache:use-lite/use-lite.safetensors");
  const auto again = config::config_from_json(c.to_json());
  CHECK(again.classifier.learned.examples == "x.csv");
  CHECK(again.classifier.learned.k == 5);

  CHECK_THROWS_WITH_AS(config::parse_config(R"({"categories":[{"name":"a"}],
    "classifier":{"kind":"embedding_knn"}})"),
                       "classifier.examples: is required for embedding_knn", ConfigError);
  CHECK_THROWS_WITH_AS(config::parse_config(R"({"categories":[{"name":"a"}],
    "classifier":{"kind":"trained_head","head":"h.pt","k":3}})"),
                       "classifier.k: unknown key", ConfigError);
  CHECK_THROWS_AS(config::parse_config(R"({"categories":[{"name":"a"}],
    "classifier":{"kind":"embedding_knn","examples":"x.csv","k":0}})"),
                  ConfigError);
  const auto head = config::parse_config(R"({"categories":[{"name":"a"}],
    "classifier":{"kind":"trained_head","head":"cache:heads/h.pt"}})");
  CHECK(head.classifier.learned.head == "cache:heads/h.pt");
  CHECK(resolve_model_path("cache:heads/h.pt") == learned_cache_dir() + "/heads/h.pt");
  CHECK(resolve_model_path("/abs/h.pt") == "/abs/h.pt");

  CHECK(c.classifier.learned.precision == EncoderPrecision::automatic);
  const auto f32 = config::parse_config(R"({"categories":[{"name":"a"}],
    "classifier":{"kind":"trained_head","head":"h.pt","precision":"f32"}})");
  CHECK(f32.classifier.learned.precision == EncoderPrecision::f32);
  CHECK(config::config_from_json(f32.to_json()).classifier.learned.precision ==
        EncoderPrecision::f32);
  CHECK_THROWS_WITH_AS(config::parse_config(R"({"categories":[{"name":"a"}],
    "classifier":{"kind":"trained_head","head":"h.pt","precision":"fp8"}})"),
                       "classifier.precision: must be auto, f32, bf16 or int8 (got 'fp8')",
                       ConfigError);
}

TEST_CASE("learned settings: kind transformer takes a checkpoint directory and its labels") {
  CHECK_THROWS_WITH_AS(config::parse_config(R"({"categories":[{"name":"a"}],
    "classifier":{"kind":"transformer"}})"),
                       "classifier.model: is required for transformer", ConfigError);
  // Any precision reads; one the CPU or the engine cannot run is refused at load, by name.
  const auto int8 = config::parse_config(R"({"categories":[{"name":"a"}],
    "classifier":{"kind":"transformer","model":"m","precision":"int8","kernels":"portable"}})");
  CHECK(int8.classifier.learned.precision == EncoderPrecision::int8);
  CHECK(int8.classifier.learned.kernels == "portable");
  CHECK(config::config_from_json(int8.to_json()).classifier.learned.kernels == "portable");
  const std::string dir = MCPCLASS_SOURCE_DIR "/tests/transformers/fixtures/bert-f32";
  // No categories: the checkpoint's id2label, in class-id order (read without the learned
  // component too).
  const auto c = config::parse_config(R"({"classifier":{"kind":"transformer","model":")" + dir +
                                      R"(","max_tokens":64}})");
  CHECK(c.categories.names() == std::vector<std::string>{"code", "math", "chat"});
  const auto again = config::config_from_json(c.to_json());
  CHECK(again.classifier.learned.model == dir);
  CHECK(again.classifier.learned.max_tokens == 64);
  CHECK_THROWS_WITH_AS(config::parse_config(R"({"classifier":{"kind":"transformer",
    "model":"/nonexistent/model"}})"),
                       doctest::Contains("classifier.model: cannot read "
                                         "'/nonexistent/model/config.json'"),
                       ConfigError);
}

TEST_CASE("knn vote: documented formula, real distribution") {
  const std::vector<Neighbour> nb{{0, 0.9}, {1, 0.8}, {0, 0.7}};
  const double t = 0.1;
  const double lambda = 0.01;
  const auto p = knn_vote(nb, 3, t, lambda);
  const double w0 = 1.0 + std::exp(-2.0);
  const double w1 = std::exp(-1.0);
  const double total = w0 + w1 + lambda;
  CHECK(p[0] == doctest::Approx((w0 + lambda / 3) / total));
  CHECK(p[1] == doctest::Approx((w1 + lambda / 3) / total));
  CHECK(p[2] == doctest::Approx((lambda / 3) / total));
  CHECK(std::accumulate(p.begin(), p.end(), 0.0) == doctest::Approx(1.0).epsilon(1e-12));
  const auto uniform = knn_vote({}, 4, t);
  for (const double v : uniform) CHECK(v == doctest::Approx(0.25));
  CHECK_THROWS_AS(knn_vote(nb, 3, 0.0), std::invalid_argument);
  CHECK_THROWS_AS(knn_vote(nb, 1, 0.1), std::invalid_argument);
}

TEST_CASE("learned examples: CSV and JSONL readers, deterministic split") {
  const auto csv = read_labelled_examples(MCPCLASS_SOURCE_DIR "/tests/data/training_data.csv");
  CHECK(csv.size() == 95);
  CHECK(csv.front().category == "math");
  const auto jsonl_path = temp_path("examples.jsonl");
  {
    std::ofstream out(jsonl_path);
    out << R"({"id":"q1","text":"What is 2+2?","category":"math"})"
        << "\n\n"
        << R"({"id":7,"text":"Who was Caesar?","category":"history"})"
        << "\n";
  }
  const auto jsonl = read_labelled_examples(jsonl_path);
  REQUIRE(jsonl.size() == 2);
  CHECK(jsonl[0].id == "q1");
  CHECK(jsonl[1].id == "7");
  {
    std::ofstream out(jsonl_path);
    out << R"({"text":"no category"})"
        << "\n";
  }
  CHECK_THROWS_WITH_AS(
      read_labelled_examples(jsonl_path),
      ("'" + jsonl_path + "' line 1: needs string members 'text' and 'category'").c_str(),
      ClassifyError);
  std::remove(jsonl_path.c_str());

  const auto train = select_split(csv, SplitPart::train);
  const auto test = select_split(csv, SplitPart::test);
  CHECK(train.size() + test.size() == csv.size());
  CHECK(test.size() > 5);
  CHECK(test.size() < 40);
  CHECK(select_split(csv, SplitPart::test).size() == test.size());  // deterministic
  for (const auto& e : test) CHECK_FALSE(in_split(e, SplitPart::train));
}

TEST_CASE("learned examples: a row's source and its own split") {
  const auto path = temp_path("mixed.sources.jsonl");
  {
    std::ofstream out(path);
    out << R"({"text":"how do I reset my card pin","category":"business","source":"banking77",)"
        << R"("split":"test"})"
        << "\n"
        << R"({"text":"how do I block my card","category":"business","source":"banking77",)"
        << R"("split":"train"})"
        << "\n"
        << R"({"text":"What is 2+2?","category":"math"})"
        << "\n";
  }
  const auto rows = read_labelled_examples(path);
  REQUIRE(rows.size() == 3);
  CHECK(rows[0].source == "banking77");
  CHECK(rows[2].source ==
        "mcpclass-learned-mixed");  // no `source`: the file's name without its extensions
  CHECK(rows[0].split == "test");
  CHECK(rows[2].split.empty());
  // The file's own split wins over the hash, whatever the held-out share.
  for (const unsigned percent : {0U, 20U, 90U}) {
    CHECK(in_split(rows[0], SplitPart::test, percent));
    CHECK_FALSE(in_split(rows[0], SplitPart::train, percent));
    CHECK(in_split(rows[1], SplitPart::train, percent));
  }
  {
    std::ofstream out(path);
    out << R"({"text":"x","category":"math","split":"validation"})"
        << "\n";
  }
  CHECK_THROWS_WITH_AS(read_labelled_examples(path),
                       ("'" + path + "' line 1: 'split' must be \"train\" or \"test\"").c_str(),
                       ClassifyError);
  std::remove(path.c_str());
}

TEST_CASE("learned files: checksums and atomic writes") {
  const auto path = temp_path("atomic/dir/file.bin");
  write_file_atomically(path, "hello");
  CHECK(file_checksum(path) == text_checksum("hello"));
  write_file_atomically(path, "world");
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  CHECK(s.str() == "world");
  CHECK(text_checksum("") == "cbf29ce484222325");  // FNV-1a 64 offset basis
  CHECK_THROWS_AS(file_checksum(temp_path("missing")), ClassifyError);
  std::filesystem::remove_all(temp_path("atomic"));
}

TEST_CASE("learned kinds: clear error when the component is missing, else a missing model") {
  const auto c = config::parse_config(R"({"categories":[{"name":"a"},{"name":"b"}],
    "classifier":{"kind":"trained_head","head":"/nonexistent/head.pt",
                  "encoder":"/nonexistent/encoder.pt","tokenizer":"/nonexistent/t.model"}})");
  if (!learned_available()) {
    CHECK_THROWS_WITH_AS(config::make_classifier(c), doctest::Contains("MCPCLASS_WITH_LEARNED=OFF"),
                         ConfigError);
  } else {
    CHECK_THROWS_WITH_AS(config::make_classifier(c), doctest::Contains("/nonexistent/t.model"),
                         ClassifyError);
  }
}
