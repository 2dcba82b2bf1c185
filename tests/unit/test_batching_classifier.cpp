// Dynamic micro-batching: concurrent calls share one classify_batch, each gets its own result.
#include "mcpclass/classify/batching_classifier.hpp"
#include "mcpclass/classify/errors.hpp"
#include "mcpclass/config/config.hpp"
#include "mcpclass/learned/learned_settings.hpp"
#include "mcpclass/service/classification_service.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

using namespace mcpclass;
using namespace std::chrono_literals;

namespace {

// The default rules classifier, recording the batches that reach it.
class Recording final : public classify::Classifier {
 public:
  Recording() : inner_(config::make_classifier(config::default_config())) {}
  const classify::CategorySet& categories() const override { return inner_->categories(); }
  classify::Classification classify(std::string_view text,
                                    const classify::ClassifyOptions& options) const override {
    return inner_->classify(text, options);
  }
  using Classifier::classify;
  std::vector<classify::Classification> classify_batch(
      std::span<const std::string_view> texts,
      const classify::ClassifyOptions& options) const override {
    {
      std::unique_lock lock(mutex);
      sizes.push_back(texts.size());
      peak = std::max(peak, ++running);
      // Held until `hold_until` batches run at once (or a 10 s safety): shows whether a
      // BatchingClassifier lets that many run.
      changed.notify_all();
      changed.wait_for(lock, std::chrono::seconds(10), [&] { return running >= hold_until; });
      hold_until = 0;  // the first overlap was seen: later batches go straight through
      changed.notify_all();
    }
    struct Done {
      const Recording& r;
      ~Done() {
        std::lock_guard lock(r.mutex);
        --r.running;
      }
    } done{*this};
    if (fail) throw classify::ClassifyError("model failed");
    return Classifier::classify_batch(texts, options);
  }
  // A pair is classified as its two texts joined by a space, its calls' sizes recorded.
  bool takes_pairs() const override { return true; }
  std::vector<classify::Classification> classify_pairs(
      std::span<const classify::TextPair> pairs,
      const classify::ClassifyOptions& options) const override {
    {
      std::lock_guard lock(mutex);
      pair_sizes.push_back(pairs.size());
    }
    std::vector<classify::Classification> out;
    for (const auto& p : pairs) out.push_back(classify(joined(p), options));
    return out;
  }
  static std::string joined(const classify::TextPair& p) {
    return std::string(p.text) + " " + std::string(p.text_pair);
  }
  std::string kind() const override { return "recording"; }
  boost::json::object info() const override { return inner_->info(); }

  mutable std::mutex mutex;
  mutable std::condition_variable changed;
  mutable std::vector<std::size_t> sizes, pair_sizes;
  mutable std::size_t running = 0, peak = 0, hold_until = 0;
  bool fail = false;

 private:
  std::unique_ptr<classify::Classifier> inner_;
};

const std::vector<std::string> kTexts = {
    "What is the derivative of x squared?", "Who won the battle of Hastings?",
    "How do I reverse a linked list in Python?", "Explain photosynthesis in plants."};

}  // namespace

TEST_CASE("batching: concurrent calls share one batch and each gets its own text's result") {
  auto inner = std::make_shared<Recording>();
  // A long wait: the batch closes when it is full, not on the clock.
  classify::BatchingClassifier batching(inner, {.max_batch = 4, .max_wait = 10s});
  std::vector<classify::Classification> results(kTexts.size());
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < kTexts.size(); ++i)
    threads.emplace_back([&, i] { results[i] = batching.classify(kTexts[i]); });
  for (auto& t : threads) t.join();
  CHECK(inner->sizes == std::vector<std::size_t>{4});
  for (std::size_t i = 0; i < kTexts.size(); ++i) {
    CAPTURE(kTexts[i]);
    CHECK(results[i].category == inner->classify(kTexts[i]).category);
    CHECK(results[i].probabilities == inner->classify(kTexts[i]).probabilities);
  }
  CHECK(batching.info().at("batching").at("texts") == 4);
}

TEST_CASE("batching: concurrent lone pairs share one classify_pairs, texts their own batch") {
  auto inner = std::make_shared<Recording>();
  classify::BatchingClassifier batching(inner, {.max_batch = 4, .max_wait = 10s});
  const std::vector<classify::TextPair> pairs = {{kTexts[0], kTexts[1]}, {kTexts[2], kTexts[3]}};
  std::vector<classify::Classification> results(4);
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < 2; ++i) {
    threads.emplace_back([&, i] { results[i] = batching.classify(kTexts[i]); });
    threads.emplace_back(
        [&, i] { results[2 + i] = batching.classify_pairs(std::span(&pairs[i], 1), {}).at(0); });
  }
  for (auto& t : threads) t.join();
  CHECK(inner->sizes == std::vector<std::size_t>{2});
  CHECK(inner->pair_sizes == std::vector<std::size_t>{2});
  for (std::size_t i = 0; i < 2; ++i) {
    CHECK(results[i].probabilities == inner->classify(kTexts[i]).probabilities);
    CHECK(results[2 + i].probabilities ==
          inner->classify(Recording::joined(pairs[i])).probabilities);
  }
  // Several pairs in one call are a batch already: they go to the inner classifier as they come.
  CHECK(batching.classify_pairs(pairs, {}).size() == 2);
  CHECK(inner->pair_sizes == std::vector<std::size_t>{2, 2});
}

TEST_CASE("batching: a lone call goes alone once the wait is over") {
  auto inner = std::make_shared<Recording>();
  classify::BatchingClassifier batching(inner, {.max_batch = 8, .max_wait = 1ms});
  CHECK(batching.classify(kTexts[0]).category == inner->classify(kTexts[0]).category);
  CHECK(batching.classify(kTexts[1]).category == inner->classify(kTexts[1]).category);
  CHECK(inner->sizes == std::vector<std::size_t>{1, 1});
}

TEST_CASE("batching: more callers than a batch holds are served in several batches") {
  auto inner = std::make_shared<Recording>();
  classify::BatchingClassifier batching(inner, {.max_batch = 3, .max_wait = 2ms});
  std::atomic<int> right{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 20; ++i)
    threads.emplace_back([&, i] {
      const auto& text = kTexts[static_cast<std::size_t>(i) % kTexts.size()];
      if (batching.classify(text).category == inner->classify(text).category) ++right;
    });
  for (auto& t : threads) t.join();
  CHECK(right == 20);
  std::size_t total = 0;
  for (const auto n : inner->sizes) {
    CHECK(n <= 3);
    total += n;
  }
  CHECK(total == 20);
}

TEST_CASE("batching: max_running batches run at once, never more, and a lone call never waits") {
  auto inner = std::make_shared<Recording>();
  inner->hold_until = 2;  // the first batch waits until a second one runs beside it
  classify::BatchingClassifier batching(
      inner, {.max_batch = 2, .max_wait = std::chrono::microseconds(0), .max_running = 2});
  std::atomic<int> right{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 9; ++i)
    threads.emplace_back([&, i] {
      const auto& text = kTexts[static_cast<std::size_t>(i) % kTexts.size()];
      if (batching.classify(text).category == inner->classify(text).category) ++right;
    });
  for (auto& t : threads) t.join();
  CHECK(right == 9);
  CHECK(inner->peak == 2);
  std::size_t total = 0;
  for (const auto n : inner->sizes) total += n;
  CHECK(total == 9);
  CHECK(batching.info().at("batching").at("max_running") == 2);
}

TEST_CASE("batching: the batch's failure reaches every caller in it") {
  auto inner = std::make_shared<Recording>();
  inner->fail = true;
  classify::BatchingClassifier batching(inner, {.max_batch = 2, .max_wait = 10s});
  std::atomic<int> failed{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 2; ++i)
    threads.emplace_back([&] {
      try {
        batching.classify(kTexts[0]);
      } catch (const classify::ClassifyError& e) {
        if (std::string(e.what()) == "model failed") ++failed;
      }
    });
  for (auto& t : threads) t.join();
  CHECK(failed == 2);
}

TEST_CASE("batching: trained_head settings read, round-trip and reject bad values") {
  const auto parse = [](const char* text) {
    return learned::LearnedSettings::from_json(boost::json::parse(text).as_object(),
                                               "trained_head");
  };
  const auto s = parse(R"({"head":"h.safetensors","batching":{"max_batch":16,"max_wait_us":300}})");
  CHECK(s.batching.max_batch == 16);
  CHECK(s.batching.max_wait == 300us);
  CHECK(s.to_json("trained_head").at("batching").at("max_batch") == 16);
  CHECK(parse(R"({"head":"h"})").batching.max_batch == 0);
  CHECK_THROWS_WITH_AS(parse(R"({"head":"h","batching":{"max_batch":0}})"),
                       doctest::Contains("classifier.batching.max_batch"), classify::ConfigError);
  CHECK_THROWS_WITH_AS(parse(R"({"head":"h","batching":{"max_wait_us":-1}})"),
                       doctest::Contains("classifier.batching.max_wait_us"), classify::ConfigError);
  CHECK_THROWS_WITH_AS(parse(R"({"head":"h","batching":{"window":5}})"),
                       doctest::Contains("window"), classify::ConfigError);
  CHECK_THROWS_AS(
      learned::LearnedSettings::from_json(
          boost::json::parse(R"({"examples":"e.csv","batching":{"max_batch":4}})").as_object(),
          "embedding_knn"),
      classify::ConfigError);
  CHECK_THROWS_WITH_AS(parse(R"({"head":"h","batching":{"max_running":-1}})"),
                       doctest::Contains("classifier.batching.max_running"), classify::ConfigError);
}

TEST_CASE("batching: kind transformer batches concurrent calls by default, without waiting") {
  const auto parse = [](const char* text) {
    return learned::LearnedSettings::from_json(boost::json::parse(text).as_object(), "transformer");
  };
  const auto s = parse(R"({"model":"m"})");
  CHECK(s.batching.max_batch == 8);
  CHECK(s.batching.max_wait == 0us);
  CHECK(s.batching.max_running == 0);  // cores ÷ threads, at load
  CHECK(parse(R"({"model":"m","batching":{"max_batch":1}})").batching.max_batch == 1);
  const auto round = parse(boost::json::serialize(s.to_json("transformer")).c_str());
  CHECK(round.batching.max_batch == 8);
  CHECK(round.batching.max_running == 0);
}

TEST_CASE(
    "batching: the service runs as many handlers at once as the batches of kind transformer "
    "take") {
  // The defect: the pool counted trained_head's batching alone, so a transformer classifier
  // (batched by default) got the 2-8 hardware workers and batches of ~2 texts, whatever the
  // connections.
  auto settings = learned::LearnedSettings::from_json(
      boost::json::parse(R"({"model":"m","threads":1,"batching":{"max_batch":8,"max_running":1}})")
          .as_object(),
      "transformer");
  CHECK(settings.batching_callers() == 16);  // a batch of 8 running, the next 8 gathering
  CHECK(settings.batching_at_load().max_running == 1);
  settings.batching.max_running = 0;
  CHECK(settings.batching_at_load().max_running ==
        std::max<std::size_t>(1, std::thread::hardware_concurrency()));
  settings.batching.max_batch = 1;
  CHECK(settings.batching_callers() == 0);

#ifdef MCPCLASS_WITH_LEARNED  // a transformer classifier needs the learned component
  const auto config =
      config::parse_config(R"({"classifier":{"kind":"transformer","model":")" MCPCLASS_SOURCE_DIR
                           R"(/tests/transformers/fixtures/bert-f32","threads":1,
          "batching":{"max_batch":8,"max_running":1}}})");
  service::ClassificationService service(config);
  CHECK(service.workers() == 16);
  // 16 jobs on its executor meet: each waits for all 16 to have started.
  constexpr int kCallers = 16;
  std::mutex mutex;
  std::condition_variable all_in;
  int started = 0;
  std::atomic<int> met{0};
  for (int i = 0; i < kCallers; ++i)
    service.executor()([&] {
      std::unique_lock lock(mutex);
      if (++started == kCallers) all_in.notify_all();
      if (all_in.wait_for(lock, 10s, [&] { return started == kCallers; })) ++met;
    });
  service.stop();
  CHECK(met.load() == kCallers);
#endif
}
