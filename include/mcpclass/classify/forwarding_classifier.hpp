// A classifier in front of another (a result cache, a batching queue): every call it does not
// override goes to the inner classifier as it comes, so a wrapper states only what it changes.
// Thread-safety: as the inner classifier's; the wrapper's own overrides say theirs.
#pragma once

#include "mcpclass/classify/classifier.hpp"

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace mcpclass::classify {

class ForwardingClassifier : public Classifier {
 public:
  /// Throws std::invalid_argument when `inner` is null (`wrapper` names the subclass).
  ForwardingClassifier(std::shared_ptr<const Classifier> inner, const char* wrapper);

  const CategorySet& categories() const override { return inner_->categories(); }
  Classification classify(std::string_view text, const ClassifyOptions& options) const override {
    return inner_->classify(text, options);
  }
  using Classifier::classify;
  std::vector<Classification> classify_batch(std::span<const std::string_view> texts,
                                             const ClassifyOptions& options) const override {
    return inner_->classify_batch(texts, options);
  }
  bool takes_pairs() const override { return inner_->takes_pairs(); }
  std::vector<Classification> classify_pairs(std::span<const TextPair> pairs,
                                             const ClassifyOptions& options) const override {
    return inner_->classify_pairs(pairs, options);
  }
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
  json::object info() const override { return inner_->info(); }
  std::string model_id() const override { return inner_->model_id(); }
  std::string tokenizer_id() const override { return inner_->tokenizer_id(); }

 protected:
  const Classifier& inner() const noexcept { return *inner_; }

 private:
  std::shared_ptr<const Classifier> inner_;
};

}  // namespace mcpclass::classify
