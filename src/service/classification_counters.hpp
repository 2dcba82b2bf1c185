// Successful classify_text calls by category, for GET /metrics
// (`mcpclass_classifications_total{category}`). Keyed by name, because a reload may change the
// categories: a counter, once shown, stays.
// Thread-safety: count() and prometheus() may be called from any thread.
#pragma once

#include "mcpclass/classify/category.hpp"
#include "mcpclass/classify/classification.hpp"

#include <atomic>
#include <cstdint>
#include <map>
#include <shared_mutex>
#include <string>

namespace mcpclass::service {

class ClassificationCounters {
 public:
  /// Starts every category of `categories` at 0, so each series exists before its first call.
  explicit ClassificationCounters(const classify::CategorySet& categories);
  void count(const classify::Classification& c);
  std::string prometheus() const;

 private:
  mutable std::shared_mutex mutex_;
  std::map<std::string, std::atomic<std::uint64_t>> counts_;
};

}  // namespace mcpclass::service
