// The trained softmax head (`mcpclass train`) and the TorchScript sequence-classifier kind made
// from it by export: same distribution either way, router-valid, clear errors for bad files.
#include "mcpclass/classify/learned_classifier.hpp"

#ifdef MCPCLASS_WITH_TORCH

#include "mcpclass/classify/classification.hpp"
#include "mcpclass/classify/errors.hpp"
#include "mcpclass/config/config.hpp"
#include "test_learned_support.hpp"

using namespace mcpclass::classify;
namespace config = mcpclass::config;

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
  LearnedSettings s;
  s.head = dir + "/head.pt";
  export_sequence_classifier(s, dir + "/seq.pt");
  auto t = config::default_config();
  t.classifier.kind = "torchscript";
  t.classifier.learned.model = dir + "/seq.pt";
  t.classifier.learned.labels = dir + "/seq.pt.labels";
  const auto seq = config::make_classifier(t);
  for (const auto& e : test) {
    const auto a = head->classify(e.text, {true});
    const auto b = seq->classify(e.text, {true});
    CHECK(a.class_index == b.class_index);
    for (std::size_t i = 0; i < a.probabilities.size(); ++i)
      CHECK(a.probabilities[i] == doctest::Approx(b.probabilities[i]).epsilon(1e-4));
  }
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

#endif
