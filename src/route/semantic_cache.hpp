// Internal: the routing proxy's semantic cache (route.semantic_cache, docs/route.md "Semantic
// cache"): upstream answers kept in process, found again by the exact query text or by the
// encoder's embedding of the query (an hnswlib index), for the same model, system prompt and
// request parameters only. Bounded by entries and bytes, least recently used first out, each
// entry expiring `ttl` after it was stored.
// Thread-safety: every SemanticCache member may be called from any thread; a CacheTicket
// belongs to one request.
#pragma once

#include "mcpclass/config/route_settings.hpp"
#include "mcpclass/learned/embedding_encoder.hpp"
#include "mcpclass/route/router.hpp"
#include "route/cache_index.hpp"
#include "route/cache_query.hpp"
#include "route/cached_answer.hpp"
#include "route/redis_link.hpp"

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace mcpclass::route {

/// Whether an entry read from Redis is what it claims: stored under the exact key of its scope
/// and text, with a TTL left, and no embedding or a unit vector of `dimension` finite floats.
bool trusted_entry(const RedisLink::Entry& entry, std::size_t dimension);

class SemanticCache {
 public:
  using Clock = std::chrono::steady_clock;
  struct Hit {
    CachedAnswer answer;
    double similarity = 1.0;
    bool exact = true;
  };

  /// `encoder` null: only the exact text finds an answer. backend_type redis: starts the link
  /// to Redis (which need not be up; its secrets' "${NAME}" unset throw ConfigError), which
  /// tells `log` (optional) when Redis fails and recovers.
  SemanticCache(config::SemanticCacheSettings settings,
                std::shared_ptr<const learned::SentenceEncoder> encoder,
                RedisLink::Log log = nullptr);
  ~SemanticCache();

  const config::SemanticCacheSettings& settings() const noexcept { return settings_; }
  /// Whether lookup() may wait on Redis (backend_type redis): not to be called on an I/O thread.
  bool shared() const noexcept { return link_ != nullptr; }
  /// Whether a configuration with these settings and this encoder may keep this cache.
  bool fits(const config::SemanticCacheSettings& settings,
            const learned::SentenceEncoder* encoder) const;

  /// The answer stored for `query`'s exact text (here, else in Redis; the stored scope and text
  /// are compared, not only their key), else for the most similar stored query of its scope at
  /// or above `threshold` (however many of other scopes are nearer). Embeds `query` (outside the
  /// lock) for a later store().
  std::optional<Hit> lookup(CacheQuery& query, double threshold,
                            Clock::time_point now = Clock::now());
  /// Keeps `answer` for `query` for `ttl`, evicting the least recently used beyond the bounds,
  /// and shares it through Redis (in the background). False (counted) when it alone exceeds
  /// max_entry_bytes.
  bool store(const CacheQuery& query, CachedAnswer answer, std::chrono::milliseconds ttl,
             Clock::time_point now = Clock::now());
  /// Counts an answer that was not stored (`reason`: status, incomplete, too_large, ...).
  void skipped(std::string_view reason);

  std::size_t entries() const;
  std::size_t bytes() const;
  std::uint64_t evictions() const;
  /// The cache's series for GET /metrics.
  std::string prometheus() const;

 private:
  struct Entry {
    std::uint64_t id = 0;
    std::string scope;
    std::string exact;
    std::string text;
    std::vector<float> embedding;
    CachedAnswer answer;
    Clock::time_point expires;
    std::size_t bytes = 0;
  };
  using Lru = std::list<Entry>;
  bool insert(Entry e, Clock::time_point now);
  // An entry of another instance, read from Redis: inserted only when it is what it claims.
  void insert_shared(RedisLink::Entry e, Clock::time_point now);
  std::optional<Hit> nearest(const CacheQuery& query, double threshold,
                             Clock::time_point now);  // under the lock
  void count_hit(double similarity, bool exact);      // under the lock
  void erase(Lru::iterator it);
  void evict_to_bounds(Clock::time_point now);
  void rebuild_index();

  const config::SemanticCacheSettings settings_;
  const std::shared_ptr<const learned::SentenceEncoder> encoder_;
  mutable std::mutex mutex_;
  Lru lru_;  // most recently used first
  std::unordered_map<std::uint64_t, Lru::iterator> by_id_;
  std::unordered_map<std::string, Lru::iterator> by_exact_;
  std::unique_ptr<CacheIndex> index_;  // null without an encoder
  std::uint64_t next_id_ = 1;
  std::size_t bytes_ = 0;
  std::uint64_t evictions_ = 0;
  std::uint64_t exact_hits_ = 0;
  std::uint64_t semantic_hits_ = 0;
  std::uint64_t misses_ = 0;
  std::array<std::uint64_t, 8> similarity_buckets_{};
  double similarity_sum_ = 0;
  std::map<std::string, std::uint64_t, std::less<>> skipped_;
  std::map<std::string, std::uint64_t, std::less<>> errors_;
  std::unique_ptr<RedisLink> link_;  // last: its reader thread stores into the members above
};

/// A routed request's way through the cache: what its answer is stored under, and the answer's
/// bytes as they stream by.
struct CacheTicket {
  std::shared_ptr<SemanticCache> cache;
  CacheQuery query;
  double threshold = 0;
  std::chrono::milliseconds ttl{0};
  std::string captured;
  bool overflow = false;

  /// Another piece of a streamed answer.
  void capture(std::string_view data);
  /// The upstream answered `status` with `body` (or, empty, what capture() collected) to its
  /// end: stores the answer when it is a complete 2xx one of text.
  void finish(unsigned status, std::string_view body = {});
};

/// The ticket of a routed evaluation when `cache` is on for its decision (the decision's
/// `semantic-cache` plugin) and the request is cacheable, else nullopt. Its scope is read from
/// the request as `router` writes it for the evaluation's model, and the decision's header
/// mutations.
std::optional<CacheTicket> open_ticket(const std::shared_ptr<SemanticCache>& cache,
                                       const RouteEvaluation& evaluation, const Router& router);

}  // namespace mcpclass::route
