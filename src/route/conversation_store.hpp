// Internal: the decisions of conversations, so that a later turn stays where its conversation
// was routed (route.conversation, docs/route.md "Conversations"). In process, bounded by bytes,
// least recently used first out, each entry expiring `ttl` after its last turn.
// Thread-safety: every member may be called from any thread.
#pragma once

#include "mcpclass/config/route_settings.hpp"
#include "mcpclass/route/router.hpp"

#include <boost/json/object.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace mcpclass::route {

/// The conversation a request belongs to: the first of `settings.key_headers` it carries
/// (`header(name)` returns "" when absent), else its body's metadata.conversation_id or
/// metadata.session_id, else a hash of its system messages and first user message. Empty when
/// the request has none of them.
std::string conversation_key(const boost::json::object& request,
                             const config::ConversationSettings& settings,
                             const std::function<std::string_view(std::string_view)>& header);

class ConversationStore {
 public:
  using Clock = std::chrono::steady_clock;

  /// The kept decision of `key`, if it has not expired; refreshes its place in the LRU order.
  std::optional<KeptDecision> find(const std::string& key, Clock::time_point now = Clock::now());
  /// Keeps `decision` for `key` for `s.ttl`, evicting the least recently used beyond
  /// `s.max_bytes`.
  void keep(const std::string& key, KeptDecision decision, const config::ConversationSettings& s,
            Clock::time_point now = Clock::now());

  std::size_t entries() const;
  std::size_t bytes() const;
  std::uint64_t evictions() const;

 private:
  struct Entry {
    std::string key;
    KeptDecision decision;
    Clock::time_point expires;
    std::size_t bytes = 0;
  };
  void evict_to(std::size_t max_bytes);

  mutable std::mutex mutex_;
  std::list<Entry> lru_;  // most recently used first
  std::unordered_map<std::string, std::list<Entry>::iterator> index_;
  std::size_t bytes_ = 0;
  std::uint64_t evictions_ = 0;
};

}  // namespace mcpclass::route
