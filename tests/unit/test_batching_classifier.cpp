// Dynamic micro-batching: concurrent calls share one classify_batch, each gets its own result.
#include "mcpclass/classify/batching_classifier.hpp"
#include "mcpclass/classify/errors.hpp"
#include "mcpclass/config/config.hpp"
#include "mcpclass/learned/learned_settings.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
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
      std::lock_guard lock(mutex);
      sizes.push_back(texts.size());
    }
    if (fail) throw classify::ClassifyError("model failed");
    return Classifier::classify_batch(texts, options);
  }
  std::string kind() const override { return "recording"; }
  boost::json::object info() const override { return inner_->info(); }

  mutable std::mutex mutex;
  mutable std::vector<std::size_t> sizes;
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
}
