// Local and remote classification combined: ask the local classifier first and the remote one
// only when the local result is not confident enough, or ask the remote one first and fall back
// to the local one when the remote fails. Results are always expressed over the local
// classifier's categories (remote categories are matched by name).
// Thread-safety: const members may be called concurrently (both parts are Classifiers).
#pragma once

#include "mcpclass/classify/classifier.hpp"

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace mcpclass::classify {

enum class CompositeMode {
  local_first,   ///< Remote only when the local confidence is below `threshold`.
  remote_first,  ///< Local only when the remote fails (any ClassifyError).
};

struct CompositeOptions {
  CompositeMode mode = CompositeMode::local_first;
  /// local_first: local results with confidence >= threshold are final.
  double threshold = 0.6;

  /// Reads `{mode: local_first|remote_first, threshold}`. Throws ConfigError.
  static CompositeOptions from_json(const json::value& v,
                                    const std::string& path = "classifier.composite");
};

class CompositeClassifier : public Classifier {
 public:
  /// Throws std::invalid_argument when a part is missing.
  CompositeClassifier(std::shared_ptr<const Classifier> local,
                      std::shared_ptr<const Classifier> remote, CompositeOptions options = {});

  const CategorySet& categories() const override { return local_->categories(); }
  /// Never throws a remote failure; throws only when the local classifier does.
  Classification classify(std::string_view text, const ClassifyOptions& options) const override;
  using Classifier::classify;
  std::string kind() const override { return "composite"; }
  bool cacheable() const override { return false; }  // its fallback is remote
  /// fnv1a64_id() of both sides' model ids: either side's change changes it.
  std::string model_id() const override;
  std::string tokenizer_id() const override { return local_->tokenizer_id(); }
  /// Both parts' info plus how often each answered.
  json::object info() const override;

 private:
  /// The remote result over the local categories; throws InvalidClassification when a category
  /// with probability > 0 (or the chosen one) is unknown locally.
  Classification map_remote(const Classification& remote) const;
  std::optional<Classification> try_remote(std::string_view text,
                                           const ClassifyOptions& options) const;

  std::shared_ptr<const Classifier> local_;
  std::shared_ptr<const Classifier> remote_;
  CompositeOptions options_;
  mutable std::atomic<std::uint64_t> answered_local_{0};
  mutable std::atomic<std::uint64_t> answered_remote_{0};
  mutable std::atomic<std::uint64_t> remote_failures_{0};
};

}  // namespace mcpclass::classify
