#include "route/conversation_store.hpp"

#include "mcpclass/learned/learned_settings.hpp"

#include <boost/json.hpp>

namespace mcpclass::route {

namespace json = boost::json;

namespace {

// What an entry costs besides its strings: list and map nodes, the time, the numbers.
constexpr std::size_t kEntryOverhead = 160;

std::size_t entry_bytes(const std::string& key, const KeptDecision& d) {
  return kEntryOverhead + 2 * key.size() + d.decision.size() + d.model.size() + d.category.size();
}

std::string_view string_at(const json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  return v && v->is_string() ? std::string_view(v->get_string()) : std::string_view();
}

}  // namespace

std::string conversation_key(const json::object& request,
                             const config::ConversationSettings& settings,
                             const std::function<std::string_view(std::string_view)>& header) {
  for (const auto& name : settings.key_headers)
    if (auto v = header(name); !v.empty()) return "h:" + std::string(v);
  if (const auto* m = request.if_contains("metadata"); m && m->is_object()) {
    for (const auto* key : {"conversation_id", "session_id"})
      if (auto v = string_at(m->get_object(), key); !v.empty()) return "m:" + std::string(v);
  }
  // The stable prefix: what every later turn of the conversation repeats unchanged.
  const auto* messages = request.if_contains("messages");
  if (messages == nullptr || !messages->is_array()) return {};
  json::array prefix;
  for (const auto& m : messages->get_array()) {
    const auto* o = m.if_object();
    if (o == nullptr) continue;
    const auto role = string_at(*o, "role");
    if (role != "system" && role != "developer" && role != "user") continue;
    prefix.push_back(o->contains("content") ? o->at("content") : json::value());
    if (role == "user") break;
  }
  if (prefix.empty()) return {};
  return "p:" + learned::text_checksum(json::serialize(prefix));
}

std::optional<KeptDecision> ConversationStore::find(const std::string& key, Clock::time_point now) {
  std::lock_guard lock(mutex_);
  const auto it = index_.find(key);
  if (it == index_.end()) return std::nullopt;
  if (it->second->expires <= now) {
    bytes_ -= it->second->bytes;
    lru_.erase(it->second);
    index_.erase(it);
    return std::nullopt;
  }
  lru_.splice(lru_.begin(), lru_, it->second);
  return it->second->decision;
}

void ConversationStore::keep(const std::string& key, KeptDecision decision,
                             const config::ConversationSettings& s, Clock::time_point now) {
  std::lock_guard lock(mutex_);
  const std::size_t cost = entry_bytes(key, decision);
  if (auto it = index_.find(key); it != index_.end()) {
    bytes_ -= it->second->bytes;
    lru_.erase(it->second);
    index_.erase(it);
  }
  if (cost > s.max_bytes) return;
  lru_.push_front(Entry{key, std::move(decision), now + s.ttl, cost});
  index_.emplace(key, lru_.begin());
  bytes_ += cost;
  evict_to(s.max_bytes);
}

void ConversationStore::evict_to(std::size_t max_bytes) {
  while (bytes_ > max_bytes && !lru_.empty()) {
    bytes_ -= lru_.back().bytes;
    index_.erase(lru_.back().key);
    lru_.pop_back();
    ++evictions_;
  }
}

std::size_t ConversationStore::entries() const {
  std::lock_guard lock(mutex_);
  return lru_.size();
}
std::size_t ConversationStore::bytes() const {
  std::lock_guard lock(mutex_);
  return bytes_;
}
std::uint64_t ConversationStore::evictions() const {
  std::lock_guard lock(mutex_);
  return evictions_;
}

}  // namespace mcpclass::route
