// The embedding kNN classifier over training_data.csv: real probabilities that pass the router's
// validation, held-out accuracy, hot additions, and the persisted index (reuse, staleness,
// damage, atomic replacement).
#include "mcpclass/learned/learned_classifier.hpp"

#ifdef MCPCLASS_WITH_LEARNED

#include "learned/knn_index.hpp"
#include "mcpclass/classify/classification.hpp"
#include "mcpclass/classify/errors.hpp"
#include "mcpclass/config/config.hpp"
#include "mcpclass/learned/embedding_encoder.hpp"
#include "test_learned_support.hpp"

#include <filesystem>

using namespace mcpclass::learned;
using mcpclass::classify::check_classification;
using mcpclass::classify::router_validation_errors;
using mcpclass::classify::to_wire;
namespace config = mcpclass::config;

namespace {

// Writes the train or test part of training_data.csv to `path`.
std::vector<LabelledExample> write_split(const std::string& path, SplitPart part) {
  const auto rows = select_split(
      read_labelled_examples(MCPCLASS_SOURCE_DIR "/tests/data/training_data.csv"), part);
  std::ofstream out(path);
  out << "category,text\n";
  for (const auto& r : rows) {
    std::string quoted;
    for (const char ch : r.text) quoted += ch == '"' ? std::string("\"\"") : std::string(1, ch);
    out << r.category << ",\"" << quoted << "\"\n";
  }
  return rows;
}

config::Config knn_config(const std::string& examples, const std::string& index) {
  learned_test::model_dir();
  auto c = config::default_config();  // the 5 reference categories
  c.classifier.kind = "embedding_knn";
  c.classifier.learned.examples = examples;
  c.classifier.learned.index = index;
  return c;
}

}  // namespace

TEST_CASE("knn classifier: training_data.csv held-out accuracy and router-valid probabilities") {
  const auto dir = learned_test::temp_dir("knn");
  write_split(dir + "/train.csv", SplitPart::train);
  const auto test = select_split(
      read_labelled_examples(MCPCLASS_SOURCE_DIR "/tests/data/training_data.csv"), SplitPart::test);
  const auto c = knn_config(dir + "/train.csv", dir + "/index.hnsw");
  const auto classifier = config::make_classifier(c);
  CHECK(classifier->kind() == "embedding_knn");
  CHECK(classifier->info().at("index_size").to_number<std::int64_t>() > 50);
  std::size_t correct = 0;
  for (const auto& e : test) {
    const auto r = classifier->classify(e.text, {true});
    check_classification(r, c.categories);
    CHECK(router_validation_errors(to_wire(r, true), c.categories.size()).empty());
    for (const double p : r.probabilities) CHECK(p > 0.0);  // a real, smoothed distribution
    correct += r.category == e.category ? 1 : 0;
    CHECK(to_wire(classifier->classify(e.text, {true}), true) ==
          to_wire(r, true));  // deterministic
  }
  MESSAGE("kNN held-out accuracy on training_data.csv: " << correct << "/" << test.size());
  CHECK(static_cast<double>(correct) >= 0.7 * static_cast<double>(test.size()));
  const auto empty = classifier->classify("", {true});
  CHECK(router_validation_errors(to_wire(empty, true), c.categories.size()).empty());
  std::filesystem::remove_all(dir);
}

TEST_CASE("knn classifier: hot additions change the vote") {
  const auto dir = learned_test::temp_dir("knn-hot");
  write_split(dir + "/train.csv", SplitPart::all);
  auto c = knn_config(dir + "/train.csv", dir + "/index.hnsw");
  c.classifier.learned.k = 3;
  const auto classifier = config::make_classifier(c);
  const std::string text = "zorblax quantum flux capacitor recalibration";
  const auto before = classifier->classify(text).category;
  const std::string target = before == "general" ? "history" : "general";
  std::vector<LabelledExample> extra;
  for (int i = 0; i < 3; ++i)
    extra.push_back({text + (i ? " please" : ""), target, "", "", "", ""});
  add_knn_examples(*classifier, extra);
  CHECK(classifier->classify(text).category == target);
  CHECK(classifier->info().at("index_size").to_number<std::int64_t>() == 98);

  // Persisted before add returns: a new classifier (a restart) loads them with the index...
  CHECK(std::filesystem::exists(dir + "/index.hnsw.added.jsonl"));
  {
    const auto reloaded = config::make_classifier(c);
    CHECK(reloaded->info().at("index_size").to_number<std::int64_t>() == 98);
    CHECK(reloaded->classify(text).category == target);
  }
  // ...and a rebuild (the examples file changed: the index is stale) replays them.
  {
    std::ofstream out(dir + "/train.csv", std::ios::app);
    out << "math,\"What is the integral of x squared?\"\n";
  }
  const auto rebuilt = config::make_classifier(c);
  CHECK(rebuilt->info().at("index_size").to_number<std::int64_t>() == 99);
  CHECK(rebuilt->classify(text).category == target);
  std::filesystem::remove_all(dir);
}

TEST_CASE("knn index: persisted, reused, rebuilt when stale or damaged") {
  const auto dir = learned_test::temp_dir("knn-persist");
  write_split(dir + "/train.csv", SplitPart::all);
  const auto c = knn_config(dir + "/train.csv", dir + "/index.hnsw");
  bool rebuilt = false;
  const auto path = build_knn_index(c.categories, c.classifier.learned, {}, &rebuilt);
  CHECK(path == dir + "/index.hnsw");
  CHECK(rebuilt);
  CHECK(std::filesystem::exists(path + ".json"));
  build_knn_index(c.categories, c.classifier.learned, {}, &rebuilt);
  CHECK_FALSE(rebuilt);  // fresh: reused

  // Changed examples → stale → rebuilt.
  {
    std::ofstream out(dir + "/train.csv", std::ios::app);
    out << "math,\"What is the integral of x squared?\"\n";
  }
  build_knn_index(c.categories, c.classifier.learned, {}, &rebuilt);
  CHECK(rebuilt);

  // A damaged graph (torn write, bit rot) is detected by its checksum, never loaded.
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(100);
    f.write("\xff\xff\xff\xff", 4);
  }
  const auto dim = std::size_t{512};
  const auto model = learned_test::model_dir();
  const KnnIndexKey key{
      load_sentence_encoder({model + "/use-lite.safetensors", model + "/tokenizer.model"})
          ->model_id(),
      file_checksum(dir + "/train.csv"), c.categories.names()};
  std::string why;
  CHECK(KnnIndex::load(path, dim, key, &why) == nullptr);
  CHECK(why == "index graph does not match its manifest (damaged or interrupted write)");
  CHECK(KnnIndex::load(path, dim, KnnIndexKey{"x", "y", c.categories.names()}, &why) == nullptr);
  CHECK(why == "model, examples or categories changed");
  build_knn_index(c.categories, c.classifier.learned, {}, &rebuilt);
  CHECK(rebuilt);
  // Garbage manifest and truncated graph: stale, no crash.
  {
    std::ofstream out(path + ".json");
    out << "{not json";
  }
  CHECK(KnnIndex::load(path, dim, key, &why) == nullptr);
  CHECK(why == "index manifest is not valid JSON");
  build_knn_index(c.categories, c.classifier.learned, {}, &rebuilt);
  CHECK(rebuilt);
  std::filesystem::resize_file(path, 1000);
  build_knn_index(c.categories, c.classifier.learned, {}, &rebuilt);
  CHECK(rebuilt);
  // Atomic writes leave no temporary files behind.
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    CHECK(entry.path().string().find(".tmp.") == std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("knn index: save/load round trip returns identical neighbours") {
  KnnIndexKey key{"model", "examples", {"a", "b"}};
  KnnIndex index(4, key);
  const std::vector<float> v{1, 0, 0, 0, 0, 1, 0, 0, 0.7071f, 0.7071f, 0, 0};
  index.add(v, std::vector<std::size_t>{0, 1, 1});
  const auto dir = learned_test::temp_dir("knn-roundtrip");
  index.save(dir + "/i.hnsw");
  std::string why;
  const auto loaded = KnnIndex::load(dir + "/i.hnsw", 4, key, &why);
  REQUIRE_MESSAGE(loaded != nullptr, why);
  const std::vector<float> q{0.9f, 0.1f, 0, 0};
  const auto a = index.search(q, 3);
  const auto b = loaded->search(q, 3);
  REQUIRE(a.size() == 3);
  REQUIRE(b.size() == 3);
  for (std::size_t i = 0; i < 3; ++i) {
    CHECK(a[i].category == b[i].category);
    CHECK(a[i].similarity == doctest::Approx(b[i].similarity));
  }
  CHECK(a[0].category == 0);
  CHECK(a[0].similarity == doctest::Approx(0.9));
  CHECK(KnnIndex::load(dir + "/i.hnsw", 8, key, &why) == nullptr);
  CHECK(why == "encoder dimension changed");
  std::filesystem::remove_all(dir);
}

#endif
