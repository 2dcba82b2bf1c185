// Internal: an approximate nearest-neighbour index of unit vectors by inner product (hnswlib),
// labelled by the caller's ids, with removal (entries marked deleted, skipped by searches). For
// indexes that change while they serve, such as the routing proxy's semantic cache; the kNN
// classifier's persisted index is KnnIndex. Implemented in knn_index.cpp: hnswlib 0.6's header
// defines non-inline functions, so one translation unit includes it.
// Thread-safety: none; callers serialise.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <utility>
#include <vector>

namespace mcpclass::learned {

class VectorIndex {
 public:
  explicit VectorIndex(std::size_t dimension);
  ~VectorIndex();
  VectorIndex(const VectorIndex&) = delete;
  VectorIndex& operator=(const VectorIndex&) = delete;

  /// `vector` has the index's dimension; `id` is not in the index. Grows as needed.
  void add(std::uint64_t id, std::span<const float> vector);
  /// False when `id` is not in the index (or already removed).
  bool remove(std::uint64_t id);
  /// Up to `k` ids nearest `query` that were not removed, with their inner product, nearest
  /// first.
  std::vector<std::pair<std::uint64_t, double>> search(std::span<const float> query,
                                                       std::size_t k) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace mcpclass::learned
