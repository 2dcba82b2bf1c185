// Internal: the decisions of conversations, so that a later turn stays where its conversation
// was routed (route.conversation, docs/route.md "Conversations"). In process, bounded by bytes,
// least recently used first out, each entry expiring `ttl` after its last turn; with
// backend_type redis also in Redis (a small JSON value per conversation with the same TTL),
// read before the process's own copy, so that a turn reaching another instance of a fleet stays
// on its model. A Redis that fails leaves the process's copy (counted, never a failed request).
// Thread-safety: every member may be called from any thread.
#pragma once

#include "mcpclass/config/route_settings.hpp"
#include "mcpclass/route/router.hpp"
#include "route/redis_link.hpp"

#include <boost/json/object.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace mcpclass::route {

/// The conversation a request belongs to: the first of `settings.key_headers` it carries
/// (`header(name)` returns "" when absent), else its body's metadata.conversation_id or
/// metadata.session_id, else the SHA-256 of its caller (caller_key()) with its system messages
/// and first user message. Empty when the request has none of them.
std::string conversation_key(const boost::json::object& request,
                             const config::ConversationSettings& settings,
                             const std::function<std::string_view(std::string_view)>& header,
                             std::string_view client_address);

/// Who sent a request, for scoping its derived conversation key: `settings.caller_header`'s value
/// when configured and present, else the SHA-256 of its Authorization header (the token is not
/// kept), else `client_address`. Distinct kinds never meet (each is prefixed).
std::string caller_key(const config::ConversationSettings& settings,
                       const std::function<std::string_view(std::string_view)>& header,
                       std::string_view client_address);

/// A kept decision of conversation `key` as the fleet shares it (JSON, at most
/// shared_decision_bytes(key)), and back: nullopt for a value that is not one (too long, not
/// JSON, a member missing or mistyped) or that names another conversation (the Redis key of a
/// long conversation key is its hash: the key itself is compared).
inline constexpr std::size_t kSharedDecisionBytes = 4096;
std::size_t shared_decision_bytes(std::string_view key);
std::string shared_decision(std::string_view key, const KeptDecision& decision);
std::optional<KeptDecision> parse_shared_decision(std::string_view value, std::string_view key);

class ConversationStore {
 public:
  using Clock = std::chrono::steady_clock;

  /// Follows `s.backend_type`: redis (with `s.enabled`) links the store to `s.redis` (a new
  /// link when those settings changed; connecting waits for the first command), memory drops
  /// the link. The link's secrets' "${NAME}" unset throw ConfigError; `log` (optional) hears
  /// when Redis fails and recovers.
  void share(const config::ConversationSettings& s, RedisLink::Log log = nullptr);
  /// Whether find() and keep() talk to Redis (and so may wait up to its command timeout).
  bool shared() const;

  /// The kept decision of `key`, if it has not expired: Redis's when linked and it has one,
  /// else this process's (whose place in the LRU order it refreshes).
  std::optional<KeptDecision> find(const std::string& key, Clock::time_point now = Clock::now());
  /// Keeps `decision` for `key` for `s.ttl`, evicting the least recently used beyond
  /// `s.max_bytes`, and in Redis when linked.
  void keep(const std::string& key, KeptDecision decision, const config::ConversationSettings& s,
            Clock::time_point now = Clock::now());

  std::size_t entries() const;
  std::size_t bytes() const;
  std::uint64_t evictions() const;
  /// The store's series for GET /metrics.
  std::string prometheus() const;

 private:
  struct Entry {
    std::string key;
    KeptDecision decision;
    Clock::time_point expires;
    std::size_t bytes = 0;
  };
  void evict_to(std::size_t max_bytes);
  std::optional<KeptDecision> find_shared(RedisLink& link, const std::string& key);
  std::shared_ptr<RedisLink> link() const;

  mutable std::mutex mutex_;
  std::list<Entry> lru_;  // most recently used first
  std::unordered_map<std::string, std::list<Entry>::iterator> index_;
  std::size_t bytes_ = 0;
  std::uint64_t evictions_ = 0;

  mutable std::mutex link_mutex_;
  std::shared_ptr<RedisLink> link_;        // null: memory only
  std::uint64_t retired_link_errors_ = 0;  // of links a reload replaced
  std::uint64_t shared_found_ = 0;         // under link_mutex_, as the three below
  std::uint64_t shared_absent_ = 0;
  std::uint64_t shared_failed_ = 0;
  std::uint64_t shared_malformed_ = 0;
};

}  // namespace mcpclass::route
