#include "route/conversation_store.hpp"

#include "route/digest.hpp"

#include <fmt/format.h>
#include <boost/json.hpp>

namespace mcpclass::route {

namespace json = boost::json;

namespace {

// What an entry costs besides its strings: list and map nodes, the time, the numbers.
constexpr std::size_t kEntryOverhead = 160;

std::size_t entry_bytes(const std::string& key, const KeptDecision& d) {
  return kEntryOverhead + 2 * key.size() + d.decision.size() + d.model.size() + d.category.size();
}

// A conversation's key in Redis: as it is, or hashed when a client's header made it long.
constexpr std::size_t kMaxSharedKey = 128;

std::string_view string_at(const json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  return v && v->is_string() ? std::string_view(v->get_string()) : std::string_view();
}

std::string shared_key(const std::string& key) {
  return key.size() <= kMaxSharedKey ? key : "x:" + content_key({key});
}

}  // namespace

std::size_t shared_decision_bytes(std::string_view key) {
  return kSharedDecisionBytes + 6 * key.size();  // each byte of the key escaped at worst
}

std::string shared_decision(std::string_view key, const KeptDecision& d) {
  return json::serialize(json::object{{"key", key},
                                      {"decision", d.decision},
                                      {"model", d.model},
                                      {"category", d.category},
                                      {"confidence", d.confidence},
                                      {"use_reasoning", d.use_reasoning}});
}

std::optional<KeptDecision> parse_shared_decision(std::string_view value, std::string_view key) {
  if (value.size() > shared_decision_bytes(key)) return std::nullopt;
  json::error_code ec;
  const auto v = json::parse(value, ec);
  const auto* o = ec ? nullptr : v.if_object();
  if (o == nullptr || string_at(*o, "key") != key) return std::nullopt;
  const auto* decision = o->if_contains("decision");
  const auto* model = o->if_contains("model");
  const auto* category = o->if_contains("category");
  const auto* confidence = o->if_contains("confidence");
  const auto* reasoning = o->if_contains("use_reasoning");
  if (!decision || !decision->is_string() || !model || !model->is_string() ||
      model->get_string().empty() || !category || !category->is_string() || !confidence ||
      !confidence->is_number() || !reasoning || !reasoning->is_bool())
    return std::nullopt;
  return KeptDecision{std::string(decision->get_string()), std::string(model->get_string()),
                      std::string(category->get_string()), confidence->to_number<double>(),
                      reasoning->get_bool()};
}

std::string caller_key(const config::ConversationSettings& settings,
                       const std::function<std::string_view(std::string_view)>& header,
                       std::string_view client_address) {
  if (!settings.caller_header.empty())
    if (auto v = header(settings.caller_header); !v.empty()) return "c:" + std::string(v);
  if (auto v = header("authorization"); !v.empty()) return "t:" + content_key({v});
  return "a:" + std::string(client_address);
}

std::string conversation_key(const json::object& request,
                             const config::ConversationSettings& settings,
                             const std::function<std::string_view(std::string_view)>& header,
                             std::string_view client_address) {
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
  // Scoped to the caller: a prefix anyone can send ("hi there") must not let one caller choose
  // the model, guards and PII policy another caller's conversation keeps.
  return "p:" +
         content_key({caller_key(settings, header, client_address), json::serialize(prefix)});
}

void ConversationStore::share(const config::ConversationSettings& s, RedisLink::Log log) {
  std::lock_guard lock(link_mutex_);
  const bool redis = s.enabled && s.backend_type == "redis";  // off: never a connection
  if (link_ && redis && link_->settings() == s.redis) return;
  if (link_) retired_link_errors_ += link_->errors();
  link_ = redis ? std::make_shared<RedisLink>(s.redis, "route.conversation.redis", nullptr, 0, 0,
                                              std::move(log))
                : nullptr;
}

bool ConversationStore::shared() const {
  return link() != nullptr;
}

std::shared_ptr<RedisLink> ConversationStore::link() const {
  std::lock_guard lock(link_mutex_);
  return link_;
}

std::optional<KeptDecision> ConversationStore::find_shared(RedisLink& link,
                                                           const std::string& key) {
  const auto value = link.get(shared_key(key), shared_decision_bytes(key));
  std::optional<KeptDecision> kept;
  if (value && !value->empty()) kept = parse_shared_decision(*value, key);
  std::lock_guard lock(link_mutex_);
  if (!value)
    ++shared_failed_;
  else if (value->empty())
    ++shared_absent_;
  else
    ++(kept ? shared_found_ : shared_malformed_);
  return kept;
}

std::optional<KeptDecision> ConversationStore::find(const std::string& key, Clock::time_point now) {
  // Redis first: another instance may have moved the conversation since this one kept it.
  if (const auto l = link())
    if (auto kept = find_shared(*l, key)) return kept;
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
  // A failed put is counted by the link: this process still keeps the decision.
  if (const auto l = link()) l->put(shared_key(key), shared_decision(key, decision), s.ttl);
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

std::string ConversationStore::prometheus() const {
  std::string out = fmt::format(
      "# HELP mcpclass_route_conversations Conversations whose decision is kept.\n"
      "# TYPE mcpclass_route_conversations gauge\nmcpclass_route_conversations {}\n"
      "# HELP mcpclass_route_conversation_bytes Bytes the kept decisions hold.\n"
      "# TYPE mcpclass_route_conversation_bytes gauge\nmcpclass_route_conversation_bytes {}\n"
      "# HELP mcpclass_route_conversation_evictions_total Kept decisions evicted for space.\n"
      "# TYPE mcpclass_route_conversation_evictions_total counter\n"
      "mcpclass_route_conversation_evictions_total {}\n",
      entries(), bytes(), evictions());
  std::lock_guard lock(link_mutex_);
  if (!link_ && retired_link_errors_ == 0) return out;
  return out +
         fmt::format(
             "# HELP mcpclass_route_conversation_shared_lookups_total Kept decisions looked up "
             "in Redis, by result (failed and malformed ones went on from memory).\n"
             "# TYPE mcpclass_route_conversation_shared_lookups_total counter\n"
             "mcpclass_route_conversation_shared_lookups_total{{result=\"found\"}} {}\n"
             "mcpclass_route_conversation_shared_lookups_total{{result=\"absent\"}} {}\n"
             "mcpclass_route_conversation_shared_lookups_total{{result=\"failed\"}} {}\n"
             "mcpclass_route_conversation_shared_lookups_total{{result=\"malformed\"}} {}\n"
             "# HELP mcpclass_route_conversation_errors_total Redis commands of the "
             "conversations that failed (the request went on from memory).\n"
             "# TYPE mcpclass_route_conversation_errors_total counter\n"
             "mcpclass_route_conversation_errors_total{{part=\"redis\"}} {}\n",
             shared_found_, shared_absent_, shared_failed_, shared_malformed_,
             retired_link_errors_ + (link_ ? link_->errors() : 0));
}

}  // namespace mcpclass::route
