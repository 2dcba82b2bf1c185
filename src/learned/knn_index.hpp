// A persisted approximate nearest-neighbour index (hnswlib, inner product on unit vectors) of
// labelled example vectors. Available with MCPCLASS_WITH_LEARNED.
#pragma once

#include "learned/knn_vote.hpp"

#include <boost/json.hpp>

#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace mcpclass::learned {

namespace json = boost::json;

/// What a persisted index was built from; an index whose manifest differs is stale.
struct KnnIndexKey {
  std::string model_id;     ///< Encoder checksum.
  std::string examples_id;  ///< Checksum of the example file.
  std::vector<std::string> categories;
  friend bool operator==(const KnnIndexKey&, const KnnIndexKey&) = default;
};

/// Thread-safety: search() may run concurrently with other search() and add() calls (a
/// reader/writer lock guards the graph); save() and add() serialise with each other.
class KnnIndex {
 public:
  KnnIndex(std::size_t dimension, KnnIndexKey key);
  ~KnnIndex();
  KnnIndex(const KnnIndex&) = delete;
  KnnIndex& operator=(const KnnIndex&) = delete;

  /// Adds unit vectors (row-major, `categories.size()` rows) labelled with class indices; the
  /// index grows as needed (hot additions while serving).
  void add(std::span<const float> vectors, std::span<const std::size_t> categories);
  /// Up to k nearest examples, most similar first.
  std::vector<Neighbour> search(std::span<const float> query, std::size_t k) const;
  std::size_t size() const;
  std::size_t dimension() const;
  const KnnIndexKey& key() const;

  /// Writes `path` (graph) and `path + ".json"` (manifest: key, count, labels, graph checksum),
  /// each atomically, graph first. Throws ClassifyError.
  void save(const std::string& path) const;
  /// The persisted index when it exists, is intact (graph checksum matches) and was built for
  /// `key` and `dimension`; nullopt when missing or stale (`why` says which). Never crashes on
  /// a damaged file.
  static std::unique_ptr<KnnIndex> load(const std::string& path, std::size_t dimension,
                                        const KnnIndexKey& key, std::string* why = nullptr);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace mcpclass::learned
