// Latency of the classification tools, whatever transport called them (HTTP, stdio, the C ABI):
// a Prometheus histogram per tool and classifier kind, `mcpclass_tool_duration_seconds`.
// Thread-safety: every member may be called from any thread. Recording into a Series is lock-free;
// series() takes a shared lock, plus an exclusive one the first time a (tool, kind) pair is seen.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <shared_mutex>
#include <string>
#include <utility>

namespace mcpclass::service {

class ToolMetrics {
 public:
  /// Upper bounds of the buckets, seconds: 50 µs to 2.5 s (rules answer in microseconds, learned
  /// models in milliseconds, remote peers in tens of milliseconds).
  static constexpr std::array<double, 15> kBuckets = {0.00005, 0.0001, 0.00025, 0.0005, 0.001,
                                                      0.0025,  0.005,  0.01,    0.025,  0.05,
                                                      0.1,     0.25,   0.5,     1.0,    2.5};

  /// The counters of one (tool, kind) pair; created on first use, valid as long as this object.
  struct Series;
  Series& series(const std::string& tool, const std::string& kind);
  /// One call that took `elapsed` on `series`; `error`: it failed. Lock-free: a caller that
  /// records often looks its series up once.
  static void record(Series& series, std::chrono::steady_clock::duration elapsed, bool error);
  /// `mcpclass_tool_duration_seconds{tool,classifier}` (histogram) and
  /// `mcpclass_tool_errors_total{tool,classifier}`.
  std::string prometheus() const;

  struct Series {
    std::array<std::atomic<std::uint64_t>, kBuckets.size()> buckets{};
    std::atomic<std::uint64_t> count{0};
    std::atomic<std::uint64_t> errors{0};
    std::atomic<std::uint64_t> sum_ns{0};
  };

 private:
  mutable std::shared_mutex mutex_;
  std::map<std::pair<std::string, std::string>, std::unique_ptr<Series>> series_;
};

}  // namespace mcpclass::service
