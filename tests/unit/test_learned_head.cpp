// The trained softmax head (`mcpclass train`) and the TorchScript sequence-classifier kind made
// from it by export: same distribution either way, router-valid, clear errors for bad files.
#include "mcpclass/learned/learned_classifier.hpp"

#ifdef MCPCLASS_WITH_LEARNED

#include "checkpoint/safetensors.hpp"
#include "learned/head_model.hpp"
#include "learned/safetensors_file.hpp"
#include "mcpclass/classify/classification.hpp"
#include "mcpclass/classify/errors.hpp"
#include "mcpclass/config/config.hpp"
#include "test_learned_support.hpp"

#include <boost/json.hpp>

#include <cmath>
#include <fstream>
#include <iterator>
#include <numeric>

using namespace mcpclass::learned;
using mcpclass::classify::check_classification;
using mcpclass::classify::Classifier;
using mcpclass::classify::ClassifyError;
using mcpclass::classify::router_validation_errors;
using mcpclass::classify::to_wire;
namespace config = mcpclass::config;

namespace {

// export_sequence_classifier of `head` into `dir`, built as kind torchscript.
auto exported(const std::string& head, const std::string& dir) {
  LearnedSettings s;
  s.head = head;
  export_sequence_classifier(s, dir + "/seq.pt");
  auto t = config::default_config();
  t.classifier.kind = "torchscript";
  t.classifier.learned.model = dir + "/seq.pt";
  t.classifier.learned.labels = dir + "/seq.pt.labels";
  return config::make_classifier(t);
}

// The same answer for `text`, to the float32 precision of the TorchScript path.
void check_agree(const Classifier& head, const Classifier& seq, const std::string& text) {
  CAPTURE(text);
  const auto a = head.classify(text, {true});
  const auto b = seq.classify(text, {true});
  CHECK(a.class_index == b.class_index);
  for (std::size_t i = 0; i < a.probabilities.size(); ++i)
    CHECK(a.probabilities[i] == doctest::Approx(b.probabilities[i]).epsilon(1e-4));
}

// A quick head on training_data.csv with an out-of-scope score that can be checked.
HeadTrainingOptions scored_head_options() {
  HeadTrainingOptions options;
  options.epochs = 20;
  // Enough calibration rows that the score's quantiles do not end above held-out rows (at the
  // default 10%, 8 rows: a fifth of the test rows fell below the lowest and all scored 0).
  options.validation_percent = 30;
  options.scope_dimensions = 32;  // compared in the prototypes' 32 principal directions
  return options;
}

}  // namespace

TEST_CASE("trained head: train on training_data.csv, classify, export as torchscript") {
  learned_test::model_dir();
  const auto dir = learned_test::temp_dir("head");
  auto c = config::default_config();
  const auto all = read_labelled_examples(MCPCLASS_SOURCE_DIR "/tests/data/training_data.csv");
  const auto train = select_split(all, SplitPart::train);
  const auto test = select_split(all, SplitPart::test);
  HeadTrainingOptions options;
  options.epochs = 100;
  options.learning_rate = 1e-2;
  SUBCASE("dense head") {}
  SUBCASE("ensemble of 2 MLPs + lexical head, crops, label smoothing") {
    options.hidden = 16;
    options.ensemble = 2;
    options.lexical_mix = 0.35;
    options.augment_crops = true;
    options.label_smoothing = 0.1;
    options.lexical_epochs = 50;
  }
  CAPTURE(options.lexical_mix);
  const auto report = train_head(c.categories, LearnedSettings{}, train, dir + "/head.pt", options);
  CHECK(report.train_rows + report.validation_rows >= train.size());
  CHECK(report.temperature > 0.0);
  CHECK(std::filesystem::exists(dir + "/head.pt.json"));
  if (options.lexical_mix > 0.0) {
    std::ifstream manifest(dir + "/head.pt.json");
    const auto m = boost::json::parse(std::string(std::istreambuf_iterator<char>(manifest), {}));
    CHECK(m.at("hidden").to_number<int>() == 32);  // the members side by side
    CHECK(m.at("report").at("ensemble").to_number<int>() == 2);
    CHECK(report.lexical_temperature > 0.0);
    CHECK(report.augmented_rows == 0);  // one short sentence each: nothing to crop
  }

  c.classifier.kind = "trained_head";
  c.classifier.learned.head = dir + "/head.pt";
  c.classifier.learned.temperature = 0.0;
  // float32, as the exported TorchScript encoder computes (bf16 would differ by its rounding).
  c.classifier.learned.precision = EncoderPrecision::f32;
  const auto head = config::make_classifier(c);
  CHECK(head->kind() == "trained_head");
  std::size_t correct = 0;
  for (const auto& e : test) {
    const auto r = head->classify(e.text, {true});
    check_classification(r, c.categories);
    CHECK(router_validation_errors(to_wire(r, true), c.categories.size()).empty());
    correct += r.category == e.category ? 1 : 0;
  }
  MESSAGE("head held-out accuracy on training_data.csv: " << correct << "/" << test.size());
  CHECK(static_cast<double>(correct) >= 0.7 * static_cast<double>(test.size()));

  // The same model as one TorchScript sequence classifier (kind torchscript).
  const auto seq = exported(dir + "/head.pt", dir);
  for (const auto& e : test) check_agree(*head, *seq, e.text);
  std::filesystem::remove_all(dir);
}

TEST_CASE("trained head and torchscript: bad files give clear errors") {
  const auto model = learned_test::model_dir();
  const auto dir = learned_test::temp_dir("head-bad");
  auto c = config::default_config();
  c.classifier.kind = "trained_head";
  c.classifier.learned.head = dir + "/head.pt";
  CHECK_THROWS_WITH_AS(config::make_classifier(c), doctest::Contains("head.pt.json"),
                       ClassifyError);
  {
    std::ofstream(dir + "/head.pt.json")
        << R"({"categories":["math"],"temperature":1,"encoder_id":"x"})";
    std::ofstream(dir + "/head.pt") << "garbage";
  }
  CHECK_THROWS_WITH_AS(config::make_classifier(c), doctest::Contains("cannot load head"),
                       ClassifyError);
  // A lexical part promised by the manifest but with a bad mix.
  std::ofstream(dir + "/head.pt.json")
      << R"({"categories":["math"],"temperature":1,"encoder_id":"x",
      "lexical":{"mix":1.5,"temperature":1,"mix_temperature":1}})";
  CHECK_THROWS_WITH_AS(config::make_classifier(c), doctest::Contains("mix in [0, 1]"),
                       ClassifyError);
  std::ofstream(dir + "/head.pt.json")
      << R"({"categories":["math"],"temperature":1,"encoder_id":"x",
      "lexical":{"mix":0.5}})";
  CHECK_THROWS_WITH_AS(config::make_classifier(c), doctest::Contains("incomplete"), ClassifyError);
  // The encoder is not a sequence classifier over these 5 labels: clear contract error.
  auto t = config::default_config();
  t.classifier.kind = "torchscript";
  t.classifier.learned.model = model + "/encoder.pt";
  CHECK_THROWS_WITH_AS(config::make_classifier(t), doctest::Contains("512 logits for 5 labels"),
                       ClassifyError);
  std::filesystem::remove_all(dir);
}

TEST_CASE("trained head: a safetensors head classifies exactly like the TorchScript one") {
  learned_test::model_dir();
  const auto dir = learned_test::temp_dir("head-safetensors");
  auto c = config::default_config();
  const auto all = read_labelled_examples(MCPCLASS_SOURCE_DIR "/tests/data/training_data.csv");
  const auto train = select_split(all, SplitPart::train);
  auto options = scored_head_options();
  options.hidden = 8;
  options.lexical_mix = 0.3;
  options.lexical_epochs = 10;
  options.scope_catchall = "general";
  for (const auto* name : {"/head.pt", "/head.safetensors"})
    train_head(c.categories, LearnedSettings{}, train, dir + name, options);
  // The same file contents a libtorch-free reader needs: every parameter by name.
  REQUIRE(mcpclass::checkpoint::looks_like_safetensors(dir + "/head.safetensors"));
  const auto tensors = mcpclass::checkpoint::read_safetensors(dir + "/head.safetensors").tensors;
  for (const auto* name : {"w0", "b0", "w1", "b1", "lex_w", "lex_b", "lex_idf"})
    CHECK_MESSAGE(tensors.contains(name), name);
  CHECK(tensors.at("w0").shape == std::vector<std::int64_t>{8, 512});
  // The out-of-scope score's parts (default: kNN over training rows), only in the safetensors
  // head: the TorchScript one loads as heads trained before did, without in_scope.
  CHECK(tensors.contains("scope_prototypes"));
  CHECK(tensors.at("scope_quantiles").shape == std::vector<std::int64_t>{101});
  CHECK(tensors.at("scope_density").shape ==
        std::vector<std::int64_t>{tensors.at("scope_prototypes").shape[0]});
  CHECK(tensors.at("scope_projection").shape == std::vector<std::int64_t>{32, 512});
  CHECK(tensors.at("scope_prototypes").shape[1] == 32);

  c.classifier.kind = "trained_head";
  c.classifier.learned.temperature = 0.0;
  // float32 like the exported TorchScript encoder (bfloat16 where the CPU has AVX-512 BF16
  // would differ from it by more than check_agree's 1e-4).
  c.classifier.learned.precision = EncoderPrecision::f32;
  c.classifier.learned.head = dir + "/head.pt";
  const auto pt = config::make_classifier(c);
  c.classifier.learned.head = dir + "/head.safetensors";
  const auto st = config::make_classifier(c);
  // in_scope separates off-topic text from held-out in-domain rows it never saw.
  const auto off_topic = st->classify("zq xv blorpt wibble 77 frob ##", {true});
  REQUIRE(off_topic.in_scope.has_value());
  check_classification(off_topic, c.categories);
  std::size_t closer = 0;
  const auto test = select_split(all, SplitPart::test);
  for (const auto& e : test) {
    const auto a = pt->classify(e.text, {true});
    const auto b = st->classify(e.text, {true});
    CHECK(a.probabilities == b.probabilities);
    CHECK_FALSE(a.in_scope.has_value());
    REQUIRE(b.in_scope.has_value());
    closer += *b.in_scope > *off_topic.in_scope ? 1 : 0;
  }
  MESSAGE("off-topic in_scope " << *off_topic.in_scope << ", below " << closer << " of "
                                << test.size() << " held-out rows");
  CHECK(*off_topic.in_scope < 0.1);
  CHECK(static_cast<double>(closer) >= 0.8 * static_cast<double>(test.size()));
  // Export reads the head as data, so a safetensors head exports too.
  const auto seq = exported(dir + "/head.safetensors", dir);
  check_agree(*st, *seq, "Solve x^2 = 4 for x");
  std::filesystem::remove_all(dir);
}

TEST_CASE("trained head: out-of-scope prototypes from other rows, in an inverted-file index") {
  learned_test::model_dir();
  const auto dir = learned_test::temp_dir("head-scope-index");
  auto c = config::default_config();
  const auto all = read_labelled_examples(MCPCLASS_SOURCE_DIR "/tests/data/training_data.csv");
  const auto train = select_split(all, SplitPart::train);
  auto options = scored_head_options();
  // The prototypes: every train row twice (as a fuller file of the domain would hold more rows
  // than the capped training rows), grouped in 6 lists, 3 searched per text.
  options.scope_examples = train;
  options.scope_examples.insert(options.scope_examples.end(), train.begin(), train.end());
  options.scope_lists = 6;
  options.scope_probes = 3;
  options.scope_label_weight = 0.05;  // a softmax over the rows' own labels: here the categories
  const auto head = dir + "/head.safetensors";
  train_head(c.categories, LearnedSettings{}, train, head, options);
  const auto tensors = mcpclass::checkpoint::read_safetensors(head).tensors;
  const auto rows = tensors.at("scope_prototypes").shape[0];
  // Validation rows are never prototypes, so fewer than the 2 × train rows.
  CHECK(rows > static_cast<std::int64_t>(train.size()));
  CHECK(rows < static_cast<std::int64_t>(2 * train.size()));
  CHECK(tensors.at("scope_centroids").shape == std::vector<std::int64_t>{6, 32});
  CHECK(tensors.at("scope_label_w").shape == std::vector<std::int64_t>{5, 512});
  CHECK(tensors.at("scope_label_b").shape == std::vector<std::int64_t>{5});
  const auto& sizes = tensors.at("scope_lists").values;
  CHECK(std::accumulate(sizes.begin(), sizes.end(), 0.0f) == static_cast<float>(rows));
  std::ifstream in(head + ".json");
  const auto manifest = boost::json::parse(std::string(std::istreambuf_iterator<char>(in), {}));
  CHECK(manifest.at("scope").at("lists").as_int64() == 6);
  CHECK(manifest.at("scope").at("probes").as_int64() == 3);
  CHECK(manifest.at("scope").at("labels").as_int64() == 5);
  CHECK(manifest.at("scope").at("label_energy_weight").as_double() > 0.0);
  const auto& fit = manifest.at("report").at("scope_fit");
  CHECK(fit.at("scope_prototypes").as_int64() == rows);
  const auto recall = fit.at("scope_index_recall").as_double();
  MESSAGE("index recall of the 5 nearest, 3 of 6 lists: " << recall);
  CHECK(recall > 0.5);
  CHECK(recall <= 1.0);

  c.classifier.kind = "trained_head";
  c.classifier.learned.temperature = 0.0;
  c.classifier.learned.head = head;
  const auto st = config::make_classifier(c);
  const auto off_topic = st->classify("zq xv blorpt wibble 77 frob ##", {true});
  REQUIRE(off_topic.in_scope.has_value());
  CHECK(*off_topic.in_scope < 0.1);
  std::size_t closer = 0;
  const auto test = select_split(all, SplitPart::test);
  for (const auto& e : test) closer += *st->classify(e.text, {true}).in_scope > *off_topic.in_scope;
  CHECK(static_cast<double>(closer) >= 0.8 * static_cast<double>(test.size()));
  // Rows of another category set are refused by name.
  options.scope_examples.push_back({"x", "sports", "x", "", "", ""});
  CHECK_THROWS_WITH_AS(train_head(c.categories, LearnedSettings{}, train, head, options),
                       doctest::Contains("scope row has unknown category 'sports'"), ClassifyError);
  std::filesystem::remove_all(dir);
}

TEST_CASE("scope score: searching every list of the index is the exhaustive score") {
  // Four unit prototypes in 2 dimensions, two lists; k = 2.
  detail::ScopeModel scope;
  scope.input = scope.dimension = 2;
  scope.k = 2;
  scope.prototypes = {1.0f, 0.0f, 0.8f, 0.6f, 0.0f, 1.0f, -0.6f, 0.8f};
  scope.quantiles = {0.0f, 1.0f};
  const std::vector<float> text{0.6f, 0.8f};
  const double exhaustive = scope.score(text, {});
  CHECK(exhaustive == doctest::Approx((0.96 + 0.8) / 2));  // its 2 most similar: rows 1 and 2
  scope.centroids = {1.0f, 0.0f, 0.0f, 1.0f};
  scope.offsets = {0, 2, 4};
  scope.probes = 2;
  CHECK(scope.score(text, {}) == doctest::Approx(exhaustive));
  // One list, its most similar centroid's: row 1, in the other list, is not found.
  scope.probes = 1;
  CHECK(scope.score(text, {}) == doctest::Approx((0.8 + 0.28) / 2));
  // The fine-label term: two labels along the axes, logits 0.6 and 0.8 at scale 1.
  scope.label_weights = {1.0f, 0.0f, 0.0f, 1.0f};
  scope.label_bias = {0.0f, 0.0f};
  scope.label_energy_weight = 0.5;
  const double energy = std::log(std::exp(0.6) + std::exp(0.8));
  CHECK(scope.label_energy(text) == doctest::Approx(energy));
  CHECK(scope.score(text, {}) == doctest::Approx((0.8 + 0.28) / 2 + 0.5 * energy));
}

TEST_CASE("trained head: corrupt or inconsistent safetensors heads give clear errors") {
  learned_test::model_dir();
  const auto dir = learned_test::temp_dir("head-safetensors-bad");
  const auto head = dir + "/head.safetensors";
  auto c = config::default_config();
  c.classifier.kind = "trained_head";
  c.classifier.learned.head = head;
  std::ofstream(head + ".json") << R"({"categories":["math","science","technology","history",
      "general"],"temperature":1,"encoder_id":"x"})";
  const auto write = [&](std::map<std::string, mcpclass::checkpoint::SafeTensor> tensors) {
    detail::write_safetensors(head, {{}, std::move(tensors)});
  };
  const std::vector<float> w(5 * 512, 0.01f);
  const std::vector<float> b(5, 0.0f);
  // Truncated: the reader names the file and the problem (no fallback to libtorch).
  write({{"w0", {{5, 512}, w}}, {"b0", {{5}, b}}});
  std::filesystem::resize_file(head, std::filesystem::file_size(head) - 100);
  CHECK_THROWS_WITH_AS(config::make_classifier(c),
                       doctest::Contains("is not a valid safetensors file"), ClassifyError);
  write({{"b0", {{5}, b}}});
  CHECK_THROWS_WITH_AS(config::make_classifier(c), doctest::Contains("has no layers (w0, b0)"),
                       ClassifyError);
  write({{"w0", {{5, 512}, w}}, {"b0", {{4}, std::vector<float>(4)}}});
  CHECK_THROWS_WITH_AS(config::make_classifier(c), doctest::Contains("inconsistent shapes"),
                       ClassifyError);
  write({{"w0", {{4, 512}, std::vector<float>(4 * 512)}}, {"b0", {{4}, std::vector<float>(4)}}});
  CHECK_THROWS_WITH_AS(config::make_classifier(c), doctest::Contains("4 outputs for 5 categories"),
                       ClassifyError);
  // A scope part promised by the manifest, but missing or of the wrong width.
  std::ofstream(head + ".json") << R"({"categories":["math","science","technology","history",
      "general"],"temperature":1,"encoder_id":"x","scope":{"k":1,"method":"centroids"}})";
  write({{"w0", {{5, 512}, w}}, {"b0", {{5}, b}}});
  CHECK_THROWS_WITH_AS(config::make_classifier(c),
                       doctest::Contains("scope manifest but no scope_prototypes"), ClassifyError);
  write({{"w0", {{5, 512}, w}},
         {"b0", {{5}, b}},
         {"scope_prototypes", {{2, 256}, std::vector<float>(512)}},
         {"scope_quantiles", {{2}, {0.1f, 0.2f}}}});
  CHECK_THROWS_WITH_AS(config::make_classifier(c),
                       doctest::Contains("scope part has inconsistent shapes"), ClassifyError);
  write({{"w0", {{5, 512}, w}},
         {"b0", {{5}, b}},
         {"scope_prototypes", {{1, 512}, std::vector<float>(512)}},
         {"scope_density", {{2}, {0.1f, 0.2f}}},
         {"scope_quantiles", {{2}, {0.1f, 0.2f}}}});
  CHECK_THROWS_WITH_AS(config::make_classifier(c),
                       doctest::Contains("scope_density does not have one value per prototype"),
                       ClassifyError);
  write({{"w0", {{5, 512}, w}},
         {"b0", {{5}, b}},
         {"scope_projection", {{2, 256}, std::vector<float>(512)}},
         {"scope_prototypes", {{1, 2}, {1.0f, 0.0f}}},
         {"scope_quantiles", {{2}, {0.1f, 0.2f}}}});
  CHECK_THROWS_WITH_AS(config::make_classifier(c),
                       doctest::Contains("scope_projection is not outputs × 512"), ClassifyError);
  // An index of another width, one whose lists do not cover the prototypes, a broken size.
  const auto indexed = [&](std::int64_t width, float size) {
    write({{"w0", {{5, 512}, w}},
           {"b0", {{5}, b}},
           {"scope_prototypes", {{2, 512}, std::vector<float>(1024)}},
           {"scope_quantiles", {{2}, {0.1f, 0.2f}}},
           {"scope_centroids", {{1, width}, std::vector<float>(static_cast<std::size_t>(width))}},
           {"scope_lists", {{1}, {size}}}});
  };
  indexed(256, 2.0f);
  CHECK_THROWS_WITH_AS(config::make_classifier(c),
                       doctest::Contains("scope index has inconsistent shapes"), ClassifyError);
  indexed(512, 1.0f);
  CHECK_THROWS_WITH_AS(config::make_classifier(c),
                       doctest::Contains("scope_lists do not add up to the prototypes"),
                       ClassifyError);
  indexed(512, -2.0f);
  CHECK_THROWS_WITH_AS(config::make_classifier(c), doctest::Contains("not a row count"),
                       ClassifyError);
  // A fine-label term of another width than the encoder's.
  write({{"w0", {{5, 512}, w}},
         {"b0", {{5}, b}},
         {"scope_prototypes", {{1, 512}, std::vector<float>(512)}},
         {"scope_quantiles", {{2}, {0.1f, 0.2f}}},
         {"scope_label_w", {{2, 256}, std::vector<float>(512)}},
         {"scope_label_b", {{2}, {0.0f, 0.0f}}}});
  CHECK_THROWS_WITH_AS(config::make_classifier(c),
                       doctest::Contains("scope label term has inconsistent shapes"),
                       ClassifyError);
  std::ofstream(head + ".json") << R"({"categories":["math","science","technology","history",
      "general"],"temperature":1,"encoder_id":"x","scope":{"k":1,"method":"rows",
      "catchall":"sports","catchall_weight":0.1}})";
  CHECK_THROWS_WITH_AS(config::make_classifier(c),
                       doctest::Contains("catch-all 'sports' is not one of the head's categories"),
                       ClassifyError);
  std::filesystem::remove_all(dir);
}

#endif
