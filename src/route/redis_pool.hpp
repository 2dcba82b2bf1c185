// Internal: a few connections to one Redis (redis_connection.hpp) shared by threads, with one
// backoff for them all: after any failure — no connection, a timeout, an error reply — Redis is
// left alone for backoff_min, doubling per failure to backoff_max, and commands fail at once
// meanwhile (the callers go on without Redis), so that a Redis refusing every command (NOAUTH
// without a password, WRONGTYPE on a key) costs a few commands a second, not a busy core.
// A command waits for a free connection at most the command timeout. A failure that starts an
// outage, a changed reason and the recovery are logged.
// Thread-safety: run() may be called from any thread; the destructor closes the connections
// and must not run while a command does.
#pragma once

#include "route/redis_connection.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mcpclass::route {

class RedisPool {
 public:
  using Clock = std::chrono::steady_clock;
  using Log = std::function<void(std::string_view)>;

  struct Options {
    std::size_t connections = 1;
    std::chrono::milliseconds timeout{50};  ///< per command, and the wait for a connection
    std::chrono::milliseconds backoff_min{100};
    std::chrono::milliseconds backoff_max{5000};
    std::string name;  ///< in log lines: which link ("cache", "cache stream", ...)
  };

  RedisPool(RedisTarget target, Options options, Log log);
  ~RedisPool();
  RedisPool(const RedisPool&) = delete;
  RedisPool& operator=(const RedisPool&) = delete;

  /// The replies of `commands` (one round trip on one connection); nullopt at once during the
  /// backoff, after waiting `timeout` for a free connection (busy()), or when Redis failed.
  std::optional<std::vector<RedisReply>> run(const std::vector<RedisConnection::Args>& commands);
  /// When the backoff of the last failure ends (the past when Redis is not failing).
  Clock::time_point retry_at() const;

  /// Commands refused because no connection came free within the timeout.
  std::uint64_t busy() const noexcept { return busy_.load(); }
  /// Connections open now, and the most ever in use at once.
  std::size_t open() const;
  std::size_t peak_in_use() const noexcept { return peak_.load(); }

 private:
  void failed(std::string why);
  void succeeded();

  const RedisTarget target_;
  const Options options_;
  const Log log_;
  mutable std::mutex mutex_;
  std::condition_variable free_cv_;
  std::vector<std::unique_ptr<RedisConnection>> idle_;
  std::size_t made_ = 0;  // connection objects: idle plus in use
  std::size_t in_use_ = 0;
  Clock::time_point retry_at_{};
  std::chrono::milliseconds next_backoff_;
  bool failing_ = false;
  std::string reason_;  // of the outage, as logged
  std::atomic<std::uint64_t> busy_{0};
  std::atomic<std::size_t> peak_{0};
};

}  // namespace mcpclass::route
