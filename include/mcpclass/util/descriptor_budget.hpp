// The descriptors a process may spend on sockets, shared by everything that opens them: the HTTP
// server's accepted connections and the routing proxy's upstream connections draw on one limit,
// so neither runs the process out of descriptors behind the other's back (a failed accept() or
// connect() then looks like a dead peer).
// Thread-safety: every member may be called from any thread.
#pragma once

#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <memory>

namespace mcpclass::util {

/// The descriptor limit (RLIMIT_NOFILE) less 64 for files, models and a remote classifier's
/// sockets (at least 16); 65536 when unlimited.
inline std::size_t socket_descriptor_limit() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return 65'536;
  constexpr rlim_t kReserve = 64;
  return static_cast<std::size_t>(
      std::max<rlim_t>(16, limit.rlim_cur - std::min(limit.rlim_cur, kReserve)));
}

class DescriptorBudget {
 public:
  /// `limit`: 0 = socket_descriptor_limit().
  explicit DescriptorBudget(std::size_t limit = 0)
      : limit_(limit > 0 ? limit : socket_descriptor_limit()) {}

  std::size_t limit() const noexcept { return limit_; }
  /// Taken with try_acquire(), plus what the tracked counter says is open.
  std::size_t in_use() const noexcept { return held_.load() + tracked(); }
  /// Takes `n` when in_use() + n <= limit(); otherwise takes nothing and returns false.
  bool try_acquire(std::size_t n = 1) noexcept {
    std::size_t held = held_.load();
    do {
      if (held + tracked() + n > limit_) return false;
    } while (!held_.compare_exchange_weak(held, held + n));
    return true;
  }
  void release(std::size_t n = 1) noexcept { held_.fetch_sub(n); }
  /// Counts `open` (a count its owner keeps, e.g. the HTTP server's open connections) in
  /// in_use() from now on, in place of an earlier one.
  void track(std::shared_ptr<const std::atomic<std::size_t>> open) { tracked_.store(open); }

 private:
  std::size_t tracked() const noexcept {
    const auto open = tracked_.load();
    return open ? open->load() : 0;
  }

  const std::size_t limit_;
  std::atomic<std::size_t> held_{0};
  std::atomic<std::shared_ptr<const std::atomic<std::size_t>>> tracked_;
};

}  // namespace mcpclass::util
