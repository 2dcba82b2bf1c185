#include "service/classification_counters.hpp"

#include "mcpclass/util/prometheus.hpp"

#include <fmt/format.h>

#include <mutex>

namespace mcpclass::service {

ClassificationCounters::ClassificationCounters(const classify::CategorySet& categories) {
  for (const auto& c : categories) counts_.try_emplace(c.name, 0);
}

void ClassificationCounters::count(const classify::Classification& c) {
  {
    std::shared_lock lock(mutex_);
    if (const auto it = counts_.find(c.category); it != counts_.end()) {
      it->second.fetch_add(1, std::memory_order_relaxed);
      return;
    }
  }
  std::unique_lock lock(mutex_);
  counts_.try_emplace(c.category, 0).first->second.fetch_add(1, std::memory_order_relaxed);
}

std::string ClassificationCounters::prometheus() const {
  std::string text =
      "# HELP mcpclass_classifications_total Successful classify_text calls by category.\n"
      "# TYPE mcpclass_classifications_total counter\n";
  std::shared_lock lock(mutex_);
  for (const auto& [name, count] : counts_) {
    text += fmt::format("mcpclass_classifications_total{{category=\"{}\"}} {}\n",
                        util::prometheus_label(name), count.load(std::memory_order_relaxed));
  }
  return text;
}

}  // namespace mcpclass::service
