#include "route/redis_link.hpp"

#include "mcpclass/util/config_error.hpp"
#include "net/tls_context.hpp"
#include "util/env_reference.hpp"

#include <fmt/format.h>
#include <hiredis/hiredis.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <random>
#include <string_view>

namespace mcpclass::route {

namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr std::size_t kStreamLength = 100000;   // announcements kept (MAXLEN ~)
constexpr std::string_view kReadCount = "256";  // announcements per XREAD: a bounded reply

// An entry's fields, in the order the read script answers them.
constexpr std::array<std::string_view, 7> kFields = {"scope",   "exact",  "text",     "model",
                                                     "content", "finish", "embedding"};
// Reads an entry only when its fields fit the bound (ARGV[1]), so that a hostile or corrupt hash
// is never sent whole: {the fields (HMGET), the milliseconds left (PTTL)}, -1 when too large,
// 0 when there is no such key, -2 when the key is not a hash (not an error reply, which would
// back the whole link off for one stray key).
constexpr std::string_view kReadEntry = R"lua(
local t = redis.call('TYPE', KEYS[1])['ok']
if t == 'none' then return 0 end
if t ~= 'hash' then return -2 end
local n = 0
for i = 2, #ARGV do n = n + redis.call('HSTRLEN', KEYS[1], ARGV[i]) end
if n > tonumber(ARGV[1]) then return -1 end
return {redis.call('HMGET', KEYS[1], unpack(ARGV, 2)), redis.call('PTTL', KEYS[1])}
)lua";

using Reply = RedisReply;

// The trust and client certificate of `tls`: a file that is missing, unreadable or does not
// match is a ConfigError naming its key, like an unset secret.
std::shared_ptr<ssl_ctx_st> tls_context_of(const config::RedisTlsSettings& tls,
                                           const std::string& path) {
  const auto step = [&](const char* key, const auto& load) {
    try {
      load();
    } catch (const std::exception& e) {
      throw util::ConfigError(path + ".tls." + key, e.what());
    }
  };
  std::shared_ptr<boost::asio::ssl::context> context;
  step("ca_file", [&] { context = net::make_client_tls_context(tls.ca_file); });
  if (!tls.cert_file.empty()) {
    step("cert_file", [&] { net::use_certificate_chain(*context, tls.cert_file); });
    step("key_file", [&] { net::use_private_key(*context, tls.key_file, tls.cert_file); });
  }
  return {context, context->native_handle()};  // the SSL_CTX, kept alive by its owner
}

RedisTarget target_of(const config::RedisCacheSettings& s, const std::string& path) {
  RedisTarget t{s.address, util::resolve_env_reference(s.username, path + ".username"),
                util::resolve_env_reference(s.password, path + ".password"), s.database,
                s.connect_timeout};
  if (s.tls.enabled) {
    t.tls = tls_context_of(s.tls, path);
    t.server_name =
        !s.tls.server_name.empty() ? s.tls.server_name : s.address.substr(0, s.address.rfind(':'));
    if (t.server_name.size() > 2 && t.server_name.front() == '[')
      t.server_name = t.server_name.substr(1, t.server_name.size() - 2);  // [::1]
  }
  return t;
}

RedisPool::Options pool_options(const config::RedisCacheSettings& s, std::size_t connections,
                                milliseconds timeout, std::string name) {
  return {connections, timeout, s.backoff_min, s.backoff_max, std::move(name)};
}

std::string random_origin() {
  std::random_device rd;
  return fmt::format("{:08x}{:08x}", rd(), rd());
}

std::string_view text(const redisReply* r) {
  return r && (r->type == REDIS_REPLY_STRING || r->type == REDIS_REPLY_STATUS)
             ? std::string_view(r->str, r->len)
             : std::string_view();
}

}  // namespace

void RedisLink::check(const config::RedisCacheSettings& settings, const std::string& path) {
  target_of(settings, path);
}

RedisLink::RedisLink(config::RedisCacheSettings settings, const std::string& path, OnEntry on_entry,
                     std::size_t load_limit, std::size_t max_entry_bytes, Log log)
    : settings_(std::move(settings)),
      on_entry_(std::move(on_entry)),
      load_limit_(load_limit),
      max_entry_bytes_(max_entry_bytes),
      origin_(random_origin()),
      commands_(target_of(settings_, path),
                pool_options(settings_, settings_.connections, settings_.timeout, path), log),
      reader_(
          target_of(settings_, path),
          pool_options(settings_, 1, settings_.timeout + settings_.read_block, path + " stream"),
          log),
      writers_(settings_.connections) {
  if (on_entry_) thread_ = std::thread([this] { read_stream(); });
}

RedisLink::~RedisLink() {
  {
    std::lock_guard lock(stop_mutex_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  writers_.stop();  // the writes queued: each done or failed within its timeout
}

void RedisLink::publish_later(Entry entry) {
  if (pending_writes_.fetch_add(1) >= settings_.max_pending_writes) {
    --pending_writes_;
    ++writes_refused_;
    return;
  }
  writers_.post([this, e = std::move(entry)] {
    publish(e);
    --pending_writes_;
  });
}

bool RedisLink::put(std::string_view key, std::string_view value, milliseconds ttl) {
  const std::string full = settings_.key_prefix + std::string(key);
  const auto px = std::to_string(std::max<long long>(1, ttl.count()));
  const bool ok = commands_.run({{"SET", full, value, "PX", px}}).has_value();
  if (!ok) ++errors_;
  return ok;
}

std::optional<std::string> RedisLink::get(std::string_view key, std::size_t max_bytes) {
  const std::string full = settings_.key_prefix + std::string(key);
  // GETRANGE, not GET: a value far beyond the bound is never read whole. A missing key is "".
  auto r = commands_.run({{"GETRANGE", full, "0", std::to_string(max_bytes)}});
  if (!r) {
    ++errors_;
    return std::nullopt;
  }
  return std::string(text((*r)[0].get()));
}

bool RedisLink::publish(const Entry& e) {
  const std::string key = settings_.key_prefix + "entry:" + e.exact;
  const std::string_view embedding(reinterpret_cast<const char*>(e.embedding.data()),
                                   e.embedding.size() * sizeof(float));
  const auto ttl = std::to_string(e.ttl.count());
  const std::string stream = settings_.key_prefix + "stream";
  const std::string length = std::to_string(kStreamLength);
  const bool ok =
      commands_
          .run({{"HSET", key, "scope", e.scope, "exact", e.exact, "text", e.text, "model",
                 e.answer.model, "content", e.answer.content, "finish", e.answer.finish_reason,
                 "embedding", embedding},
                {"PEXPIRE", key, ttl},
                {"XADD", stream, "MAXLEN", "~", length, "*", "origin", origin_, "exact", e.exact}})
          .has_value();
  if (!ok) ++errors_;
  return ok;
}

std::optional<RedisLink::Entry> RedisLink::fetch(const std::string& exact) {
  bool failed = false;
  return fetch_on(commands_, exact, failed);
}

std::optional<RedisLink::Entry> RedisLink::fetch_on(RedisPool& pool, const std::string& exact,
                                                    bool& failed) {
  const std::string key = settings_.key_prefix + "entry:" + exact;
  const auto bound = std::to_string(max_entry_bytes_);
  RedisConnection::Args args{"EVAL", kReadEntry, "1", key, bound};
  args.insert(args.end(), kFields.begin(), kFields.end());
  const auto replies = pool.run({args});
  if (!replies) {
    failed = true;
    ++errors_;
    return std::nullopt;
  }
  const auto* r = (*replies)[0].get();
  if (r->type == REDIS_REPLY_INTEGER) {  // none (0); too large or not a hash: refused unread
    if (r->integer != 0) ++errors_;
    return std::nullopt;
  }
  if (r->type != REDIS_REPLY_ARRAY || r->elements != 2) return std::nullopt;
  const auto* fields = r->element[0];
  const auto* ttl = r->element[1];
  if (fields->type != REDIS_REPLY_ARRAY || fields->elements != kFields.size() ||
      ttl->type != REDIS_REPLY_INTEGER || ttl->integer <= 0)
    return std::nullopt;
  Entry e;
  e.ttl = milliseconds(ttl->integer);
  e.scope = text(fields->element[0]);
  e.exact = text(fields->element[1]);
  e.text = text(fields->element[2]);
  e.answer.model = text(fields->element[3]);
  e.answer.content = text(fields->element[4]);
  e.answer.finish_reason = text(fields->element[5]);
  if (const auto embedding = text(fields->element[6]); embedding.size() % sizeof(float) == 0) {
    e.embedding.resize(embedding.size() / sizeof(float));
    std::memcpy(e.embedding.data(), embedding.data(), embedding.size());
  }
  if (e.exact != exact || e.scope.empty() || e.answer.finish_reason.empty()) return std::nullopt;
  return e;
}

// The entries already stored, handed to on_entry (up to load_limit_); returns the stream's id
// as it was before the SCAN, so that what is announced meanwhile is read after it (an entry
// read twice replaces itself). Nullopt when Redis failed on the way (tried again after the
// backoff).
std::optional<std::string> RedisLink::load_stored() {
  auto tail = reader_.run({{"XREVRANGE", settings_.key_prefix + "stream", "+", "-", "COUNT", "1"}});
  if (!tail) return std::nullopt;
  std::string from = "0-0";
  if (const auto* t = (*tail)[0].get(); t->type == REDIS_REPLY_ARRAY && t->elements == 1 &&
                                        t->element[0]->type == REDIS_REPLY_ARRAY &&
                                        t->element[0]->elements > 0)
    from = text(t->element[0]->element[0]);
  const std::string entry_prefix = settings_.key_prefix + "entry:";
  std::string pattern;  // the prefix as a SCAN pattern: its glob characters escaped
  for (const char ch : entry_prefix) {
    if (std::string_view("*?[]\\").find(ch) != std::string_view::npos) pattern += '\\';
    pattern += ch;
  }
  pattern += '*';
  std::string cursor = "0";
  std::uint64_t n = 0;
  do {
    auto replies = reader_.run({{"SCAN", cursor, "MATCH", pattern, "COUNT", "256"}});
    if (!replies) return std::nullopt;
    const auto* r = (*replies)[0].get();
    if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
        r->element[1]->type != REDIS_REPLY_ARRAY)
      return std::nullopt;
    cursor = text(r->element[0]);
    const auto* keys = r->element[1];
    for (std::size_t k = 0; k < keys->elements && n < load_limit_; ++k) {
      const auto key = text(keys->element[k]);
      if (!key.starts_with(entry_prefix)) continue;
      bool failed = false;
      auto e = fetch_on(reader_, std::string(key.substr(entry_prefix.size())), failed);
      if (failed) return std::nullopt;  // Redis went away mid-way
      if (!e) continue;                 // expired meanwhile, or not an entry
      on_entry_(std::move(*e));
      ++n;
      ++loaded_;
    }
    std::lock_guard lock(stop_mutex_);
    if (stopping_) break;
  } while (cursor != "0" && n < load_limit_);
  return from;
}

void RedisLink::read_stream() {
  const std::string stream = settings_.key_prefix + "stream";
  std::string last;  // empty until the stored entries are loaded
  for (;;) {
    {
      // After a failure, nothing is sent before its backoff ends (an error reply, NOAUTH or
      // WRONGTYPE, comes back at once: retried at once, it would keep a core busy).
      std::unique_lock lock(stop_mutex_);
      stop_cv_.wait_until(lock, reader_.retry_at(), [&] { return stopping_; });
      if (stopping_) return;
    }
    if (last.empty()) {
      if (load_limit_ == 0) {
        last = "$";  // announcements from now on
      } else if (auto from = load_stored()) {
        last = std::move(*from);
      } else {
        ++errors_;
        continue;
      }
    }
    auto replies =
        reader_.run({{"XREAD", "COUNT", kReadCount, "BLOCK",
                      std::to_string(settings_.read_block.count()), "STREAMS", stream, last}});
    if (!replies) {
      ++errors_;
      continue;
    }
    const auto* r = (*replies)[0].get();
    if (r->type != REDIS_REPLY_ARRAY) continue;  // nil: nothing within the block time
    for (std::size_t s = 0; s < r->elements; ++s) {
      const auto* st = r->element[s];
      if (st->type != REDIS_REPLY_ARRAY || st->elements != 2) continue;
      const auto* messages = st->element[1];
      for (std::size_t m = 0; m < messages->elements; ++m) {
        const auto* msg = messages->element[m];
        if (msg->type != REDIS_REPLY_ARRAY || msg->elements != 2) continue;
        last = text(msg->element[0]);
        std::string origin, exact;
        const auto* fields = msg->element[1];
        for (std::size_t f = 0; f + 1 < fields->elements; f += 2) {
          if (text(fields->element[f]) == "origin") origin = text(fields->element[f + 1]);
          if (text(fields->element[f]) == "exact") exact = text(fields->element[f + 1]);
        }
        if (origin == origin_ || exact.empty()) continue;
        bool failed = false;
        if (auto e = fetch_on(reader_, exact, failed)) on_entry_(std::move(*e));
      }
    }
  }
}

}  // namespace mcpclass::route
