// Internal: the semantic cache's link to Redis (route.semantic_cache.backend_type: redis), so a
// fleet of proxies shares its answers. Each entry is a Redis hash (scope, exact key, answer,
// embedding as raw floats) expiring with its TTL; each store is announced on a Redis stream,
// which a reader thread follows (XREAD BLOCK) to hand other instances' entries to the local
// cache and its index. Every command has a short timeout; a failed one drops the connection,
// which is retried after a backoff (doubling to 5 s): while Redis is away, commands fail at
// once and count an error, and the cache answers from memory.
// Thread-safety: publish() and fetch() may be called from any thread; `on_entry` runs on the
// reader thread, which the destructor stops and joins.
#pragma once

#include "mcpclass/config/semantic_cache_settings.hpp"
#include "route/cached_answer.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace mcpclass::route {

class RedisLink {
 public:
  /// One cached answer as the fleet shares it. Plain value.
  struct Entry {
    std::string scope;
    std::string exact;
    std::vector<float> embedding;
    CachedAnswer answer;
    std::chrono::milliseconds ttl{0};  ///< what is left of it
  };
  using OnEntry = std::function<void(Entry)>;

  /// Starts the reader thread; Redis need not be up yet.
  RedisLink(config::RedisCacheSettings settings, OnEntry on_entry);
  ~RedisLink();
  RedisLink(const RedisLink&) = delete;
  RedisLink& operator=(const RedisLink&) = delete;

  /// Writes `entry` and announces it on the stream. False when Redis could not be reached.
  bool publish(const Entry& entry);
  /// The entry stored under `exact`; nullopt when there is none or Redis could not be reached.
  std::optional<Entry> fetch(const std::string& exact);
  /// Commands that failed (timeouts, refused connections, error replies).
  std::uint64_t errors() const noexcept { return errors_.load(); }

 private:
  struct Connection;
  void read_stream();
  std::optional<Entry> fetch_on(Connection& c, const std::string& exact);

  const config::RedisCacheSettings settings_;
  const OnEntry on_entry_;
  const std::string origin_;  // this instance, so that it skips its own announcements
  std::atomic<std::uint64_t> errors_{0};
  std::mutex command_mutex_;
  std::unique_ptr<Connection> command_;
  std::unique_ptr<Connection> reader_;
  std::mutex stop_mutex_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;
  std::thread thread_;  // last: started when the rest is built
};

}  // namespace mcpclass::route
