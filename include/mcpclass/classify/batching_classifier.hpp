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

#include "mcpclass/classify/forwarding_classifier.hpp"

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

class BatchingClassifier final : public ForwardingClassifier {
 public:
  /// `inner` must not be null; options.max_batch >= 2.
  BatchingClassifier(std::shared_ptr<const Classifier> inner, BatchingOptions options);

  /// Joins the next batch. classify_batch() and rerankings go to the inner classifier as they
  /// come (one forward pass per call).
  Classification classify(std::string_view text, const ClassifyOptions& options) const override;
  using Classifier::classify;
  /// A lone sentence pair joins the next batch too (its pairs go in one classify_pairs of the
  /// inner classifier, its texts in one classify_batch); several pairs go as they come.
  std::vector<Classification> classify_pairs(std::span<const TextPair> pairs,
                                             const ClassifyOptions& options) const override;
  /// The inner classifier's, plus "batching" {max_batch, max_wait_us, max_running, batches,
  /// texts}.
  json::object info() const override;

 private:
  struct Waiter;
  Classification join(Waiter& me) const;
  void lead(std::unique_lock<std::mutex>& lock) const;
  // One forward pass over `group` (all texts or all pairs); each waiter gets its result or error.
  void run(const std::vector<Waiter*>& group) const;

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
