// Dynamic micro-batching: concurrent classify() calls are gathered for at most `max_wait` or up
// to `max_batch` texts and classified in one Classifier::classify_batch call (one encoder forward
// pass for the learned kinds). Each caller gets its own result, or the batch's exception.
//
// There is no thread of its own: the first caller of a batch leads it (waits, runs the batch,
// wakes the others), so the object has no lifetime beyond its callers'. At most `max_running`
// batches run at once; callers beyond them wait for the next batch. So N concurrent requests
// cost at most max_running forward passes at a time (each with its own intra-op threads), never
// one thread team per request: with max_running = cores / intra-op threads the cores stay busy
// and are never oversubscribed. A request that is
// cancelled or times out is answered (or not) by the server as any other; its text still
// finishes in the batch it joined, so the others' results never wait on it.
//
// Thread-safety: every const member may be called concurrently from any thread.
#pragma once

#include "mcpclass/classify/classifier.hpp"

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

namespace mcpclass::classify {

struct BatchingOptions {
  /// Texts per batch; 0 or 1 = no batching.
  std::size_t max_batch = 0;
  /// How long the first text of a batch waits for others (0: it takes the texts already
  /// waiting, so a lone caller never waits).
  std::chrono::microseconds max_wait{200};
  /// Batches that run at once (at least 1).
  std::size_t max_running = 1;
};

class BatchingClassifier final : public Classifier {
 public:
  /// `inner` must not be null; options.max_batch >= 2.
  BatchingClassifier(std::shared_ptr<const Classifier> inner, BatchingOptions options);

  const CategorySet& categories() const override { return inner_->categories(); }
  Classification classify(std::string_view text, const ClassifyOptions& options) const override;
  using Classifier::classify;
  std::vector<Classification> classify_batch(std::span<const std::string_view> texts,
                                             const ClassifyOptions& options) const override {
    return inner_->classify_batch(texts, options);
  }
  /// Pairs go to the inner classifier as they come (one forward pass per call's pairs).
  bool takes_pairs() const override { return inner_->takes_pairs(); }
  std::vector<Classification> classify_pairs(std::span<const TextPair> pairs,
                                             const ClassifyOptions& options) const override {
    return inner_->classify_pairs(pairs, options);
  }
  /// Rerankings go to the inner classifier as they come, never cached.
  bool reranks() const override { return inner_->reranks(); }
  std::vector<RerankScore> rerank(std::string_view query,
                                  std::span<const std::string_view> passages,
                                  const ClassifyOptions& options) const override {
    return inner_->rerank(query, passages, options);
  }
  std::vector<std::pair<std::string, std::shared_ptr<const Classifier>>> tasks() const override {
    return inner_->tasks();
  }
  std::string kind() const override { return inner_->kind(); }
  bool cacheable() const override { return inner_->cacheable(); }
  std::string model_id() const override { return inner_->model_id(); }
  std::string tokenizer_id() const override { return inner_->tokenizer_id(); }
  /// The inner classifier's, plus "batching" {max_batch, max_wait_us, max_running, batches,
  /// texts}.
  json::object info() const override;

 private:
  struct Waiter;
  void lead(std::unique_lock<std::mutex>& lock) const;

  std::shared_ptr<const Classifier> inner_;
  BatchingOptions options_;
  mutable std::mutex mutex_;
  mutable std::condition_variable wake_;
  mutable std::vector<Waiter*> queue_;  // callers not yet in a batch, oldest first
  mutable std::size_t leading_ = 0;     // callers gathering or running a batch
  mutable bool gathering_ = false;      // a leader is waiting for its batch to fill
  mutable std::size_t batches_ = 0;
  mutable std::size_t texts_ = 0;
};

}  // namespace mcpclass::classify
