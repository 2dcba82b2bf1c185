// The stdio transport: newline-delimited JSON-RPC on two file descriptors. Only protocol goes to
// the output; logs belong on stderr.
// Thread-safety: serve_stdio blocks its caller; responses are written from worker threads under
// a lock, one whole line at a time.
#pragma once

#include "mcpclass/server/server.hpp"

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace mcpclass::transport::server {

/// Traffic of stdio transports, for /metrics. Lock-free; share one between transports to sum them.
struct StdioCounters {
  std::atomic<std::uint64_t> messages_in{0};   ///< non-blank lines read (each a message or batch)
  std::atomic<std::uint64_t> messages_out{0};  ///< lines written
  std::atomic<std::uint64_t> bytes_in{0};
  std::atomic<std::uint64_t> bytes_out{0};
  std::atomic<std::uint64_t> oversized{0};  ///< lines over max_line_bytes, refused

  /// Prometheus text: mcpclass_stdio_messages_total{direction}, mcpclass_stdio_bytes_total
  /// {direction}, mcpclass_stdio_oversized_lines_total.
  std::string prometheus() const;
};

struct StdioOptions {
  /// Longest accepted line; a longer one is discarded and answered with a parse error.
  std::size_t max_line_bytes = 4 * 1024 * 1024;
  /// At end of input, how long in-flight requests may still run before they are cancelled.
  std::chrono::milliseconds drain_timeout{30'000};
  /// When readable (e.g. the read end of a self-pipe), input is treated as ended: lets another
  /// thread stop a server blocked on reading. -1 for none.
  int stop_fd = -1;
  /// Counted into when set.
  std::shared_ptr<StdioCounters> counters;
};

/// Serves one client on `in_fd`/`out_fd` until end of input, answers what is in flight, then
/// returns 0 (or 1 when the output fails).
int serve_stdio(const std::shared_ptr<mcpclass::server::Server>& server, int in_fd = 0,
                int out_fd = 1, StdioOptions options = {});

}  // namespace mcpclass::transport::server
