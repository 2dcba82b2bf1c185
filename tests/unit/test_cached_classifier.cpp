// server.cache: a sharded LRU in front of a deterministic classifier.
#include "mcpclass/classify/cached_classifier.hpp"
#include "mcpclass/config/config.hpp"
#include "mcpclass/service/classification_service.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

using namespace mcpclass;
using namespace std::chrono_literals;

namespace {

// The default rules classifier, counting the calls that reach it.
class Counting final : public classify::Classifier {
 public:
  Counting() : inner_(config::make_classifier(config::default_config())) {}
  const classify::CategorySet& categories() const override { return inner_->categories(); }
  classify::Classification classify(std::string_view text,
                                    const classify::ClassifyOptions& options) const override {
    ++calls;
    return inner_->classify(text, options);
  }
  using Classifier::classify;
  std::string kind() const override { return inner_->kind(); }
  boost::json::object info() const override { return inner_->info(); }
  mutable std::atomic<int> calls{0};

 private:
  std::unique_ptr<classify::Classifier> inner_;
};

}  // namespace

TEST_CASE("cache: normalization trims and collapses whitespace, nothing else") {
  CHECK(classify::normalize_for_cache("  What is\t 2+2?\n") == "What is 2+2?");
  CHECK(classify::normalize_for_cache("A  b") == "A b");
  CHECK(classify::normalize_for_cache(" \n ") == "");
  CHECK(classify::normalize_for_cache("Case Stays") == "Case Stays");
}

TEST_CASE("cache: hits return the inner result, the options are part of the key") {
  auto inner = std::make_shared<Counting>();
  classify::CachedClassifier cached(inner, {.entries = 100, .ttl = 0ms});
  const auto first = cached.classify("What is the derivative of x squared?");
  const auto again = cached.classify("  What is the derivative   of x squared?\n");
  CHECK(inner->calls == 1);
  CHECK(cached.hits() == 1);
  CHECK(cached.misses() == 1);
  CHECK(again.category == first.category);
  CHECK(again.probabilities == first.probabilities);
  CHECK(first.category == inner->classify("What is the derivative of x squared?").category);
  cached.classify("What is the derivative of x squared?", {.with_probabilities = true});
  CHECK(cached.misses() == 2);
  CHECK(cached.info().at("cache").at("size") == 2);
}

TEST_CASE("cache: at most `entries` results, least recently used go first, ttl expires them") {
  auto inner = std::make_shared<Counting>();
  classify::CachedClassifier cached(inner, {.entries = 32, .ttl = 0ms});
  for (int i = 0; i < 1000; ++i) cached.classify("question number " + std::to_string(i));
  CHECK(cached.size() <= 32);
  CHECK(cached.size() >= 16);
  classify::CachedClassifier expiring(inner, {.entries = 10, .ttl = 50ms});
  expiring.classify("history of Rome");
  expiring.classify("history of Rome");
  CHECK(expiring.hits() == 1);
  std::this_thread::sleep_for(80ms);
  expiring.classify("history of Rome");
  CHECK(expiring.misses() == 2);
}

TEST_CASE("cache: at most `max_bytes` of keys and results, evictions counted") {
  auto inner = std::make_shared<Counting>();
  // 16 shards of 64 KiB: each holds one 40 KB text (10,000 four-byte code points), never two.
  classify::CachedClassifier cached(inner, {.entries = 5000, .max_bytes = 16 * 64 * 1024});
  std::string big;
  for (int i = 0; i < 10'000; ++i) big += "\xF0\x9F\x98\x80";  // U+1F600
  for (int i = 0; i < 200; ++i) {
    cached.classify(std::to_string(i) + big);
    CHECK(cached.bytes() <= 16 * 64 * 1024);
  }
  CHECK(cached.size() <= 16);
  CHECK(cached.bytes() >= cached.size() * 40'000);
  CHECK(cached.evictions() == 200 - cached.size());
  const auto cache = cached.info().at("cache");
  CHECK(cache.at("max_bytes") == 16 * 64 * 1024);
  CHECK(cache.at("evictions") == 200 - cached.size());
  // Small results still fill the entries; a result larger than a shard's share is not kept.
  for (int i = 0; i < 100; ++i) cached.classify("question " + std::to_string(i));
  CHECK(cached.size() > 16);
  classify::CachedClassifier tiny(inner, {.entries = 100, .max_bytes = 16 * 1024});
  tiny.classify(big);
  tiny.classify(big);
  CHECK(tiny.size() == 0);
  CHECK(tiny.misses() == 2);
  CHECK(tiny.evictions() == 0);
}

TEST_CASE("cache: concurrent callers agree with the classifier") {
  auto inner = std::make_shared<Counting>();
  classify::CachedClassifier cached(inner, {.entries = 64, .ttl = 0ms});
  const std::vector<std::string> texts = {"solve x^2 = 4", "Who was Napoleon?",
                                          "How do vaccines work?", "write a python function"};
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 500; ++i) {
        const auto& text = texts[i % texts.size()];
        if (cached.classify(text).category != inner->classify(text).category) ++wrong;
      }
    });
  }
  for (auto& t : threads) t.join();
  CHECK(wrong == 0);
  CHECK(cached.hits() >= 8 * 500 - 8 * 4);
}

TEST_CASE("cache: server.cache wraps the service's classifier and reports in /metrics text") {
  auto cfg = config::parse_config("server:\n  cache: {entries: 1000, ttl: 60}\n");
  CHECK(cfg.server.cache.entries == 1000);
  CHECK(cfg.server.cache.max_bytes == 16 * 1024 * 1024);
  CHECK(config::parse_config("server:\n  cache: {entries: 10, max_bytes: 4096}\n")
            .server.cache.max_bytes == 4096);
  CHECK(cfg.server.cache.ttl == 60s);
  CHECK(config::parse_config(boost::json::serialize(cfg.to_json())).to_json() == cfg.to_json());
  service::ClassificationService with(cfg);
  with.classifier()->classify("a");
  with.classifier()->classify("a");
  CHECK(with.prometheus().find("mcpclass_cache_hits_total 1\n") != std::string::npos);
  CHECK(with.prometheus().find("mcpclass_cache_evictions_total 0\n") != std::string::npos);
  service::ClassificationService without(config::default_config());
  CHECK(without.prometheus().find("mcpclass_cache") == std::string::npos);
  CHECK_THROWS_WITH(config::parse_config("server:\n  cache: {entries: -1}\n"),
                    "server.cache.entries: must be within [0, 100000000]");
  CHECK_THROWS_WITH(config::parse_config("server:\n  cache: {entries: 10, max_bytes: 0}\n"),
                    "server.cache.max_bytes: must be an integer >= 1");
}
