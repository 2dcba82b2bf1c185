// A result cache in front of a deterministic classifier: `server.cache {entries, max_bytes, ttl}`.
// Thread-safety: like every Classifier, all const members may be called concurrently; the cache
// is split into shards, each behind its own mutex, so concurrent hits rarely wait on each other.
#pragma once

#include "mcpclass/classify/forwarding_classifier.hpp"

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace mcpclass::classify {

struct CacheOptions {
  std::size_t entries = 0;  ///< Results kept in all (0 = no cache).
  /// Bytes kept in all, keys and results (a caller chooses the texts: 10,000 four-byte code
  /// points are 40 KB of key each, so `entries` alone does not bound memory). 16 MiB hold some
  /// 28,000 results of everyday queries (~600 bytes each, measured with 5 categories).
  std::size_t max_bytes = 16 * 1024 * 1024;
  std::chrono::milliseconds ttl{0};  ///< How long a result stays valid (0 = until evicted).
};

/// The text a cache keys on and the inner classifier sees: trimmed, every run of whitespace one
/// space, so "  What is 2+2?\n" and "What is 2+2?" share an entry.
std::string normalize_for_cache(std::string_view text);

/// Least-recently-used results of `inner`, keyed by the normalized text and the options, at most
/// `entries` of them and `max_bytes` in all (each of the 16 shards holds a 16th of both; a result
/// larger than a shard's share is not kept). A new
/// classifier (a reload) comes with a new cache, so a generation never sees another's results.
/// Use it only for deterministic classifiers: a remote's answer depends on its peer.
class CachedClassifier final : public ForwardingClassifier {
 public:
  CachedClassifier(std::shared_ptr<const Classifier> inner, CacheOptions options);
  ~CachedClassifier() override;

  /// The cached result for the normalized text, or the inner classifier's (then kept).
  Classification classify(std::string_view text, const ClassifyOptions& options) const override;
  using Classifier::classify;
  /// Each text through classify(), so a batch is answered from the cache where it can be.
  std::vector<Classification> classify_batch(std::span<const std::string_view> texts,
                                             const ClassifyOptions& options) const override {
    return Classifier::classify_batch(texts, options);
  }
  /// Whether classify() would answer from the cache now (a fresh result is kept), without
  /// counting a hit or a miss: what lets a cached answer skip admission control.
  bool holds(std::string_view text, const ClassifyOptions& options) const;
  // Sentence pairs and rerankings are not cached: ForwardingClassifier passes them on.
  bool cacheable() const override { return false; }  // already cached
  /// The inner info() plus "cache": {entries, max_bytes, size, bytes, hits, misses, evictions}.
  json::object info() const override;

  std::uint64_t hits() const noexcept { return hits_; }
  std::uint64_t misses() const noexcept { return misses_; }
  /// Results dropped to make room (by `entries` or `max_bytes`; expired ones are not counted).
  std::uint64_t evictions() const noexcept { return evictions_; }
  std::size_t size() const;
  /// The bytes the kept keys and results take (an estimate counting their heap blocks).
  std::size_t bytes() const;

 private:
  struct Shard;
  CacheOptions options_;
  std::unique_ptr<Shard[]> shards_;
  std::size_t per_shard_;
  std::size_t bytes_per_shard_;
  mutable std::atomic<std::uint64_t> hits_{0};
  mutable std::atomic<std::uint64_t> misses_{0};
  mutable std::atomic<std::uint64_t> evictions_{0};
};

}  // namespace mcpclass::classify
