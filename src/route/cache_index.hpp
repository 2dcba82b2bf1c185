// Internal: the semantic cache's nearest-neighbour index of query embeddings (unit vectors,
// inner product): learned::VectorIndex (hnswlib) with the learned classifiers
// (MCPCLASS_WITH_LEARNED), a scan without them (no encoder is configurable then, so it holds
// nothing). Removed entries are marked deleted; the owner rebuilds the index when they outnumber
// the live ones (`stale()`), so its memory stays within a small multiple of the live entries'.
// Thread-safety: none; the semantic cache calls it under its lock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <utility>
#include <vector>

namespace mcpclass::route {

class CacheIndex {
 public:
  explicit CacheIndex(std::size_t dimension);
  ~CacheIndex();
  CacheIndex(const CacheIndex&) = delete;
  CacheIndex& operator=(const CacheIndex&) = delete;

  std::size_t dimension() const noexcept { return dimension_; }
  /// `vector` has dimension() floats; `id` is not in the index.
  void add(std::uint64_t id, std::span<const float> vector);
  void remove(std::uint64_t id);
  /// Up to `k` live ids nearest `query`, with their cosine similarity, most similar first.
  std::vector<std::pair<std::uint64_t, double>> search(std::span<const float> query,
                                                       std::size_t k) const;
  /// More removed entries than live ones (and more than a few): time for clear() and add()s.
  bool stale() const noexcept;
  void clear();

 private:
  struct Impl;
  std::size_t dimension_;
  std::unique_ptr<Impl> impl_;
  std::size_t live_ = 0;
  std::size_t removed_ = 0;
};

}  // namespace mcpclass::route
