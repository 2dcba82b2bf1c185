#include "mcpclass/classify/batching_classifier.hpp"

#include "mcpclass/classify/errors.hpp"

#include <algorithm>
#include <optional>
#include <stdexcept>

namespace mcpclass::classify {

struct BatchingClassifier::Waiter {
  std::string_view text;
  ClassifyOptions options;
  std::optional<Classification> result;
  std::exception_ptr error;
  bool done = false;
};

BatchingClassifier::BatchingClassifier(std::shared_ptr<const Classifier> inner,
                                       BatchingOptions options)
    : inner_(std::move(inner)), options_(options) {
  if (!inner_) throw std::invalid_argument("BatchingClassifier: no inner classifier");
  if (options_.max_batch < 2) throw std::invalid_argument("BatchingClassifier: max_batch < 2");
  if (options_.max_running < 1) throw std::invalid_argument("BatchingClassifier: max_running < 1");
}

Classification BatchingClassifier::classify(std::string_view text,
                                            const ClassifyOptions& options) const {
  Waiter me{text, options, std::nullopt, nullptr, false};
  std::unique_lock lock(mutex_);
  queue_.push_back(&me);
  if (leading_ > 0 && queue_.size() >= options_.max_batch) wake_.notify_all();  // a batch is full
  while (!me.done) {
    // A caller still queued leads when a batch may start and none is gathering.
    if (!gathering_ && leading_ < options_.max_running &&
        std::find(queue_.begin(), queue_.end(), &me) != queue_.end()) {
      lead(lock);
    } else {
      wake_.wait(lock);
    }
  }
  lock.unlock();
  if (me.error) std::rethrow_exception(me.error);
  return std::move(*me.result);
}

void BatchingClassifier::lead(std::unique_lock<std::mutex>& lock) const {
  ++leading_;
  gathering_ = true;
  wake_.wait_for(lock, options_.max_wait, [&] { return queue_.size() >= options_.max_batch; });
  const std::size_t n = std::min(queue_.size(), options_.max_batch);
  std::vector<Waiter*> batch(queue_.begin(), queue_.begin() + static_cast<std::ptrdiff_t>(n));
  queue_.erase(queue_.begin(), queue_.begin() + static_cast<std::ptrdiff_t>(n));
  ++batches_;
  texts_ += n;
  gathering_ = false;
  if (!queue_.empty() && leading_ < options_.max_running) wake_.notify_all();  // next batch
  lock.unlock();
  // One options value per batch: callers asking for different options go through one by one.
  std::vector<std::string_view> texts;
  texts.reserve(n);
  bool same_options = true;
  for (const auto* w : batch) {
    texts.push_back(w->text);
    same_options =
        same_options && w->options.with_probabilities == batch.front()->options.with_probabilities;
  }
  try {
    if (same_options) {
      auto results = inner_->classify_batch(texts, batch.front()->options);
      if (results.size() != n)
        throw ClassifyError("classify_batch returned " + std::to_string(results.size()) +
                            " results for " + std::to_string(n) + " texts");
      for (std::size_t i = 0; i < n; ++i) batch[i]->result = std::move(results[i]);
    } else {
      for (auto* w : batch) {
        try {
          w->result = inner_->classify(w->text, w->options);
        } catch (...) {
          w->error = std::current_exception();
        }
      }
    }
  } catch (...) {
    for (auto* w : batch)
      if (!w->result) w->error = std::current_exception();
  }
  lock.lock();
  for (auto* w : batch) w->done = true;
  --leading_;
  wake_.notify_all();  // the batch's callers, and one of the rest to lead the next batch
}

json::object BatchingClassifier::info() const {
  json::object out = inner_->info();
  std::lock_guard lock(mutex_);
  out["batching"] = json::object{{"max_batch", options_.max_batch},
                                 {"max_wait_us", options_.max_wait.count()},
                                 {"max_running", options_.max_running},
                                 {"batches", batches_},
                                 {"texts", texts_}};
  return out;
}

}  // namespace mcpclass::classify
