#include "mcpclass/service/tool_metrics.hpp"

#include <fmt/format.h>

#include <mutex>

namespace mcpclass::service {

ToolMetrics::Series& ToolMetrics::series(const std::string& tool, const std::string& kind) {
  const auto key = std::make_pair(tool, kind);
  {
    std::shared_lock lock(mutex_);
    if (const auto it = series_.find(key); it != series_.end()) return *it->second;
  }
  std::unique_lock lock(mutex_);
  auto& slot = series_[key];
  if (!slot) slot = std::make_unique<Series>();
  return *slot;
}

void ToolMetrics::record(Series& series, std::chrono::steady_clock::duration elapsed, bool error) {
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(elapsed).count();
  const double seconds = static_cast<double>(ns) / 1e9;
  // Cumulative buckets are summed when printed; each call lands in its first bucket only.
  for (std::size_t i = 0; i < kBuckets.size(); ++i) {
    if (seconds <= kBuckets[i]) {
      series.buckets[i].fetch_add(1, std::memory_order_relaxed);
      break;
    }
  }
  series.count.fetch_add(1, std::memory_order_relaxed);
  series.sum_ns.fetch_add(static_cast<std::uint64_t>(ns < 0 ? 0 : ns), std::memory_order_relaxed);
  if (error) series.errors.fetch_add(1, std::memory_order_relaxed);
}

std::string ToolMetrics::prometheus() const {
  std::string out =
      "# HELP mcpclass_tool_duration_seconds Time a classification tool took, by tool and "
      "classifier kind (any transport).\n"
      "# TYPE mcpclass_tool_duration_seconds histogram\n";
  std::string errors =
      "# HELP mcpclass_tool_errors_total Classification tool calls that failed.\n"
      "# TYPE mcpclass_tool_errors_total counter\n";
  std::shared_lock lock(mutex_);
  for (const auto& [key, series] : series_) {
    const auto labels = fmt::format("tool=\"{}\",classifier=\"{}\"", key.first, key.second);
    std::uint64_t cumulative = 0;
    for (std::size_t i = 0; i < kBuckets.size(); ++i) {
      cumulative += series->buckets[i].load(std::memory_order_relaxed);
      out += fmt::format("mcpclass_tool_duration_seconds_bucket{{{},le=\"{}\"}} {}\n", labels,
                         kBuckets[i], cumulative);
    }
    const auto count = series->count.load(std::memory_order_relaxed);
    out +=
        fmt::format("mcpclass_tool_duration_seconds_bucket{{{},le=\"+Inf\"}} {}\n", labels, count);
    out += fmt::format("mcpclass_tool_duration_seconds_sum{{{}}} {}\n", labels,
                       static_cast<double>(series->sum_ns.load(std::memory_order_relaxed)) / 1e9);
    out += fmt::format("mcpclass_tool_duration_seconds_count{{{}}} {}\n", labels, count);
    errors += fmt::format("mcpclass_tool_errors_total{{{}}} {}\n", labels,
                          series->errors.load(std::memory_order_relaxed));
  }
  return out + errors;
}

}  // namespace mcpclass::service
