// Counters of the HTTP transport and their Prometheus text exposition.
// Thread-safety: every method may be called from any thread.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

namespace mcpclass::transport::server {

class HttpMetrics {
 public:
  /// One HTTP exchange: route label ("mcp", "router", "sse", "health", ...), status, duration.
  void record_http(std::string_view route, unsigned status, double seconds);
  /// The label a request method is counted under: its name when the engine answers it,
  /// "other" for any other text a client sent (so labels stay few and short).
  static std::string_view method_label(std::string_view method) noexcept;
  /// One JSON-RPC request by method (see method_label), and whether it ended in an error.
  void record_rpc(std::string_view method, bool error);
  /// Levels read when /metrics is asked for.
  struct Gauges {
    std::size_t connections = 0;   ///< open HTTP connections
    std::size_t sessions = 0;      ///< active sessions
    std::size_t streams = 0;       ///< open GET SSE streams
    std::size_t replay_bytes = 0;  ///< bytes the SSE replay stores hold
  };
  /// The exposition text: the counters, then `gauges`.
  std::string render(const Gauges& gauges) const;

 private:
  static constexpr std::array<double, 12> kBuckets = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                                                      0.05,   0.1,   0.25,   0.5,   1.0,  5.0};
  // Counters are kept in shards chosen by thread, summed when rendered: the I/O threads count
  // every request without sharing a lock or a cache line.
  struct alignas(64) Shard {
    mutable std::mutex mutex;
    std::map<std::pair<std::string, unsigned>, std::uint64_t> http;
    std::map<std::string, std::pair<std::uint64_t, std::uint64_t>> rpc;  // method → calls, errors
    std::array<std::uint64_t, kBuckets.size()> bucket_counts{};
    std::uint64_t duration_count = 0;
    double duration_sum = 0;
  };
  static constexpr std::size_t kShards = 8;
  Shard& shard();
  std::array<Shard, kShards> shards_;
};

}  // namespace mcpclass::transport::server
