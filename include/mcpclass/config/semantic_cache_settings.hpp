// `route.semantic_cache`: answers of the upstreams kept and replayed for the same or a similar
// query to the same model and system prompt (docs/route.md "Semantic cache"). The keys follow
// the vLLM Semantic Router's `semantic_cache` section; max_bytes and max_entry_bytes are
// mcpclass's bounds.
// Thread-safety: plain values.
#pragma once

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <chrono>
#include <cstddef>
#include <string>

namespace mcpclass::config {

/// `redis.tls`: the connections to Redis over TLS (Redis's `tls-port`), its certificate verified
/// (chain and name) and, when Redis asks for one (`tls-auth-clients`), this instance's
/// certificate presented. The file names follow `server.http.tls` and an upstream's `ca_file`.
struct RedisTlsSettings {
  /// On when the `tls` section is written, unless it says `enabled: false`.
  bool enabled = false;
  /// PEM CAs Redis's certificate must chain to (empty: the system's trust store).
  std::string ca_file{};
  /// This instance's certificate chain and its key (PEM), both or neither.
  std::string cert_file{};
  std::string key_file{};
  /// The name Redis's certificate must carry (DNS name or IP literal), also sent as SNI (a DNS
  /// name). Empty: the host of `address`; needed with a Unix socket address.
  std::string server_name{};

  bool operator==(const RedisTlsSettings&) const = default;
};

/// `backend_type: redis`: entries shared by a fleet of proxies through one Redis.
struct RedisCacheSettings {
  /// "host:port", or an absolute path to a Unix socket.
  std::string address = "127.0.0.1:6379";
  std::string key_prefix = "mcpclass:cache:";
  std::chrono::milliseconds connect_timeout{200};
  /// Each command's (a request never waits longer on Redis), and the longest a command waits
  /// for a free connection of the pool.
  std::chrono::milliseconds timeout{50};
  /// AUTH: an ACL user (needs `password`; empty: the default user) and its password, each as
  /// written: "${NAME}" is resolved from the environment when the link starts (ConfigError
  /// naming the key when NAME is unset), so that secrets stay out of the file.
  std::string username{};
  std::string password{};
  /// SELECT: the logical database (0: Redis's default, no SELECT sent).
  int database = 0;
  /// After any failure (no connection, a timeout, an error reply such as NOAUTH or WRONGTYPE)
  /// Redis is left alone this long, doubling per failure up to backoff_max; a success resets.
  std::chrono::milliseconds backoff_min{100};
  std::chrono::milliseconds backoff_max{5000};
  /// Connections for the requests' commands (the stream reader has its own).
  std::size_t connections = 4;
  /// Stores waiting for the link's writer threads; beyond them an answer stays in this
  /// instance only (counted as redis_busy), so a slow Redis cannot grow the queue unbounded.
  std::size_t max_pending_writes = 1024;
  /// The stream reader's XREAD BLOCK: how long it waits for an announcement before it looks
  /// again, so also how soon it sees a stop (a reload that replaces the link, or the end).
  std::chrono::milliseconds read_block{500};
  RedisTlsSettings tls{};

  bool operator==(const RedisCacheSettings&) const = default;
  boost::json::object to_json() const;
  /// Strict, over `defaults`: unknown keys, bad types and values throw ConfigError naming
  /// `path.key`. (Also route.conversation.redis.)
  static RedisCacheSettings from_json(const boost::json::value& v, const std::string& path,
                                      RedisCacheSettings defaults);
};

struct SemanticCacheSettings {
  bool enabled = false;
  /// "memory" (in process, an hnswlib index) or "redis" (the same, shared through `redis`).
  std::string backend_type = "memory";
  RedisCacheSettings redis;
  /// The cosine similarity of the query's embedding to a stored one at which it is a hit.
  double similarity_threshold = 0.8;
  /// How long an answer is kept after it was stored.
  std::chrono::milliseconds ttl{3'600'000};
  std::size_t max_entries = 10'000;
  /// All entries' bytes (query, answer, embedding, bookkeeping); the least recently used go first.
  std::size_t max_bytes = 64 * 1024 * 1024;
  /// An answer larger than this (as received) is not stored.
  std::size_t max_entry_bytes = 1024 * 1024;

  boost::json::object to_json() const;
  /// Strict: unknown keys, bad types and values throw ConfigError naming `path.key`.
  static SemanticCacheSettings from_json(const boost::json::value& v, const std::string& path);
};

}  // namespace mcpclass::config
