#include "mcpclass/classify/batching_classifier.hpp"

#include "mcpclass/classify/errors.hpp"

#include <algorithm>
#include <optional>
#include <stdexcept>

namespace mcpclass::classify {

struct BatchingClassifier::Waiter {
  std::string_view text;
  std::optional<std::string_view> text_pair;  ///< a sentence pair's second text
  ClassifyOptions options;
  std::optional<Classification> result;
  std::exception_ptr error;
  bool done = false;
};

BatchingClassifier::BatchingClassifier(std::shared_ptr<const Classifier> inner,
                                       BatchingOptions options)
    : ForwardingClassifier(std::move(inner), "BatchingClassifier"), options_(options) {
  if (options_.max_batch < 2) throw std::invalid_argument("BatchingClassifier: max_batch < 2");
  if (options_.max_running < 1) throw std::invalid_argument("BatchingClassifier: max_running < 1");
}

Classification BatchingClassifier::classify(std::string_view text,
                                            const ClassifyOptions& options) const {
  Waiter me{text, std::nullopt, options, std::nullopt, nullptr, false};
  return join(me);
}

std::vector<Classification> BatchingClassifier::classify_pairs(
    std::span<const TextPair> pairs, const ClassifyOptions& options) const {
  // A call of several pairs is a batch already; a lone pair (an NLI check per request) waits
  // for others as a lone text does.
  if (pairs.size() != 1 || !inner().takes_pairs()) return inner().classify_pairs(pairs, options);
  Waiter me{pairs.front().text, pairs.front().text_pair, options, std::nullopt, nullptr, false};
  std::vector<Classification> out;
  out.push_back(join(me));
  return out;
}

Classification BatchingClassifier::join(Waiter& me) const {
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
  // Texts in one classify_batch, pairs in one classify_pairs.
  std::vector<Waiter*> singles, pairs;
  for (auto* w : batch) (w->text_pair ? pairs : singles).push_back(w);
  run(singles);
  run(pairs);
  lock.lock();
  for (auto* w : batch) w->done = true;
  --leading_;
  wake_.notify_all();  // the batch's callers, and one of the rest to lead the next batch
}

void BatchingClassifier::run(const std::vector<Waiter*>& group) const {
  if (group.empty()) return;
  const std::size_t n = group.size();
  const bool pairs = group.front()->text_pair.has_value();
  // One options value per forward pass: callers asking for different options go one by one.
  bool same_options = true;
  for (const auto* w : group)
    same_options =
        same_options && w->options.with_probabilities == group.front()->options.with_probabilities;
  try {
    if (same_options) {
      std::vector<Classification> results;
      if (pairs) {
        std::vector<TextPair> inputs;
        inputs.reserve(n);
        for (const auto* w : group) inputs.push_back({w->text, *w->text_pair});
        results = inner().classify_pairs(inputs, group.front()->options);
      } else {
        std::vector<std::string_view> texts;
        texts.reserve(n);
        for (const auto* w : group) texts.push_back(w->text);
        results = inner().classify_batch(texts, group.front()->options);
      }
      if (results.size() != n)
        throw ClassifyError(std::string(pairs ? "classify_pairs" : "classify_batch") +
                            " returned " + std::to_string(results.size()) + " results for " +
                            std::to_string(n) + (pairs ? " pairs" : " texts"));
      for (std::size_t i = 0; i < n; ++i) group[i]->result = std::move(results[i]);
    } else {
      for (auto* w : group) {
        try {
          if (pairs) {
            const TextPair one{w->text, *w->text_pair};
            w->result = inner().classify_pairs(std::span(&one, 1), w->options).at(0);
          } else {
            w->result = inner().classify(w->text, w->options);
          }
        } catch (...) {
          w->error = std::current_exception();
        }
      }
    }
  } catch (...) {
    for (auto* w : group)
      if (!w->result) w->error = std::current_exception();
  }
}

json::object BatchingClassifier::info() const {
  json::object out = inner().info();
  std::lock_guard lock(mutex_);
  out["batching"] = json::object{{"max_batch", options_.max_batch},
                                 {"max_wait_us", options_.max_wait.count()},
                                 {"max_running", options_.max_running},
                                 {"batches", batches_},
                                 {"texts", texts_}};
  return out;
}

}  // namespace mcpclass::classify
