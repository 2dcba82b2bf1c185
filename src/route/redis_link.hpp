// Internal: the route proxy's link to Redis, so a fleet of proxies shares what it keeps. The
// semantic cache (route.semantic_cache.backend_type: redis) stores each entry as a Redis hash
// (scope, exact key, answer, embedding as raw floats) expiring with its TTL and announces it on
// a Redis stream, which a reader thread follows (XREAD BLOCK) to hand other instances' entries to
// the local cache and its index; before following, the reader SCANs the entries already in Redis
// (up to a limit) into it, so an instance started later knows them too. The conversations
// (route.conversation.backend_type: redis) keep plain values with a TTL (put/get). Commands run
// on a small pool of connections (redis_pool.hpp), the reader on its own; every command has a
// short timeout, and any failure (no connection, a timeout, an error reply) backs off: while
// Redis is away or refusing, commands fail at once and count an error, the reader waits, and
// the callers go on from memory.
// Thread-safety: publish(), fetch(), put() and get() may be called from any thread (each may
// wait up to the command timeout for a connection, then up to the timeout for Redis: not on an
// I/O thread); `on_entry` runs on the reader thread, which the destructor stops and joins.
#pragma once

#include "mcpclass/config/semantic_cache_settings.hpp"
#include "mcpclass/util/executor.hpp"
#include "route/cached_answer.hpp"
#include "route/redis_pool.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace mcpclass::route {

class RedisLink {
 public:
  /// One cached answer as the fleet shares it. Plain value.
  struct Entry {
    std::string scope;
    std::string exact;
    std::string text;  ///< the query, compared on every hit (the key alone is not trusted)
    std::vector<float> embedding;
    CachedAnswer answer;
    std::chrono::milliseconds ttl{0};  ///< what is left of it
  };
  using OnEntry = std::function<void(Entry)>;
  using Log = RedisPool::Log;

  /// What the constructor would throw for `settings`, without connecting: for a caller that must
  /// refuse a reload before it commits to one (the conversations' link starts at the commit).
  static void check(const config::RedisCacheSettings& settings, const std::string& path);

  /// Resolves `settings`' username and password ("${NAME}": ConfigError naming `path`.key when
  /// NAME is unset), loads its `tls` files (ConfigError naming `path`.tls.key when one is
  /// missing, unreadable or does not match) and starts the reader thread when `on_entry` is set
  /// (null: a plain key-value link, no thread); Redis need not be up yet. The reader first hands
  /// `on_entry` up to `load_limit` entries already stored (SCAN), then the stream's announcements
  /// from that moment on. An entry whose fields hold more than `max_entry_bytes` together is not
  /// read (nor counted against memory: Redis checks the sizes before it sends anything). `log`
  /// (optional) hears when Redis starts failing, why, and when it works again.
  RedisLink(config::RedisCacheSettings settings, const std::string& path, OnEntry on_entry,
            std::size_t load_limit = 0, std::size_t max_entry_bytes = 0, Log log = nullptr);
  ~RedisLink();
  RedisLink(const RedisLink&) = delete;
  RedisLink& operator=(const RedisLink&) = delete;

  /// Writes `entry` and announces it on the stream. False when Redis could not be reached.
  bool publish(const Entry& entry);
  /// publish() on the link's writer threads (`connections` of them), so that the caller (an
  /// upstream's I/O thread) never waits on Redis. Beyond the settings' max_pending_writes
  /// waiting, the entry is not shared (counted in busy()).
  void publish_later(Entry entry);
  /// The entry stored under `exact`; nullopt when there is none or Redis could not be reached.
  std::optional<Entry> fetch(const std::string& exact);
  /// Sets `<key_prefix><key>` to `value`, expiring after `ttl`. False when Redis could not be
  /// reached.
  bool put(std::string_view key, std::string_view value, std::chrono::milliseconds ttl);
  /// The value of `<key_prefix><key>`, at most `max_bytes` + 1 bytes of it (so that a longer
  /// one shows): "" when there is none, nullopt when Redis could not be reached.
  std::optional<std::string> get(std::string_view key, std::size_t max_bytes);
  const config::RedisCacheSettings& settings() const noexcept { return settings_; }
  /// Commands that failed (timeouts, refused connections, error replies, refused during the
  /// backoff), and keys under the entry prefix that are not hashes.
  std::uint64_t errors() const noexcept { return errors_.load(); }
  /// Commands refused because no connection of the pool came free within the timeout.
  std::uint64_t busy() const noexcept { return commands_.busy() + writes_refused_.load(); }
  /// The most command connections ever in use at once.
  std::size_t peak_connections() const noexcept { return commands_.peak_in_use(); }
  /// Entries the reader found already stored when it started.
  std::uint64_t loaded() const noexcept { return loaded_.load(); }

 private:
  void read_stream();
  std::optional<std::string> load_stored();
  // The entry under `exact`; nullopt when there is none or it is refused, with `failed` set
  // when Redis failed.
  std::optional<Entry> fetch_on(RedisPool& pool, const std::string& exact, bool& failed);

  const config::RedisCacheSettings settings_;
  const OnEntry on_entry_;
  const std::size_t load_limit_;
  const std::size_t max_entry_bytes_;
  const std::string origin_;  // this instance, so that it skips its own announcements
  std::atomic<std::uint64_t> errors_{0};
  std::atomic<std::uint64_t> loaded_{0};
  RedisPool commands_;
  RedisPool reader_;
  std::atomic<std::size_t> pending_writes_{0};
  std::atomic<std::uint64_t> writes_refused_{0};
  util::ThreadPool writers_;  // after the pools, which its jobs use; stopped first
  std::mutex stop_mutex_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;
  std::thread thread_;  // last: started when the rest is built
};

}  // namespace mcpclass::route
