#include "route/redis_link.hpp"

#include <fmt/format.h>
#include <hiredis/hiredis.h>
#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <random>
#include <string_view>

namespace mcpclass::route {

namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr milliseconds kFirstBackoff{100};
constexpr milliseconds kMaxBackoff{5000};
constexpr milliseconds kBlock{500};             // XREAD BLOCK: how soon the reader sees a stop
constexpr std::size_t kStreamLength = 100000;   // announcements kept (MAXLEN ~)
constexpr std::string_view kReadCount = "256";  // announcements per XREAD: a bounded reply

// An entry's fields, in the order the read script answers them.
constexpr std::array<std::string_view, 7> kFields = {"scope",   "exact",  "text",     "model",
                                                     "content", "finish", "embedding"};
// Reads an entry only when its fields fit the bound (ARGV[1]), so that a hostile or corrupt hash
// is never sent whole: {the fields (HMGET), the milliseconds left (PTTL)}, or -1 when too large.
constexpr std::string_view kReadEntry = R"lua(
local n = 0
for i = 2, #ARGV do n = n + redis.call('HSTRLEN', KEYS[1], ARGV[i]) end
if n > tonumber(ARGV[1]) then return -1 end
return {redis.call('HMGET', KEYS[1], unpack(ARGV, 2)), redis.call('PTTL', KEYS[1])}
)lua";

timeval to_timeval(milliseconds ms) {
  return {static_cast<time_t>(ms.count() / 1000),
          static_cast<suseconds_t>(ms.count() % 1000 * 1000)};
}

struct ReplyFree {
  void operator()(redisReply* r) const { freeReplyObject(r); }
};
using Reply = std::unique_ptr<redisReply, ReplyFree>;

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

// A write to a connection Redis closed raises SIGPIPE, which would end the process: it is
// blocked on this thread while a command runs, and one it raised is taken before unblocking.
// (Per thread: the process's disposition is not the cache's to change.)
class PipeGuard {
 public:
  PipeGuard() {
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_, &old_);
  }
  ~PipeGuard() {
    sigset_t pending;
    sigpending(&pending);
    if (sigismember(&pending, SIGPIPE) && !sigismember(&old_, SIGPIPE)) {
      const timespec zero{0, 0};
      sigtimedwait(&pipe_, nullptr, &zero);
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  PipeGuard(const PipeGuard&) = delete;
  PipeGuard& operator=(const PipeGuard&) = delete;

 private:
  sigset_t pipe_;
  sigset_t old_;
};

// One connection, dropped on any failure and made again after its backoff.
struct RedisLink::Connection {
  Connection(const config::RedisCacheSettings& s, milliseconds timeout)
      : settings(s), timeout(timeout) {}
  ~Connection() { drop(); }

  const config::RedisCacheSettings& settings;
  const milliseconds timeout;
  redisContext* context = nullptr;
  Clock::time_point retry_at{};
  milliseconds backoff = kFirstBackoff;

  void drop() {
    if (context) redisFree(context);
    context = nullptr;
  }

  void failed() {
    drop();
    retry_at = Clock::now() + backoff;
    backoff = std::min(backoff * 2, kMaxBackoff);
  }

  bool ready() {
    if (context) return true;
    if (Clock::now() < retry_at) return false;
    const auto tv = to_timeval(settings.connect_timeout);
    const auto& a = settings.address;
    if (a.starts_with('/')) {
      context = redisConnectUnixWithTimeout(a.c_str(), tv);
    } else {
      const auto colon = a.rfind(':');
      context =
          redisConnectWithTimeout(a.substr(0, colon).c_str(), std::stoi(a.substr(colon + 1)), tv);
    }
    if (context == nullptr || context->err ||
        redisSetTimeout(context, to_timeval(timeout)) != REDIS_OK) {
      failed();
      return false;
    }
    backoff = kFirstBackoff;
    return true;
  }

  using Args = std::vector<std::string_view>;

  // The replies of `commands`, sent together (one round trip); empty (the connection dropped)
  // on a failure, and a null reply for each error reply.
  std::vector<Reply> pipeline(const std::vector<Args>& commands) {
    if (!ready()) return {};
    const PipeGuard guard;
    for (const auto& args : commands) {
      std::vector<const char*> argv;
      std::vector<std::size_t> lengths;
      for (const auto a : args) {
        argv.push_back(a.data());
        lengths.push_back(a.size());
      }
      if (redisAppendCommandArgv(context, static_cast<int>(argv.size()), argv.data(),
                                 lengths.data()) != REDIS_OK) {
        failed();
        return {};
      }
    }
    std::vector<Reply> replies;
    for (std::size_t i = 0; i < commands.size(); ++i) {
      void* raw = nullptr;
      if (redisGetReply(context, &raw) != REDIS_OK || raw == nullptr || context->err) {
        if (raw) freeReplyObject(raw);
        failed();
        return {};
      }
      Reply r(static_cast<redisReply*>(raw));
      if (r->type == REDIS_REPLY_ERROR) r.reset();
      replies.push_back(std::move(r));
    }
    return replies;
  }

  // The reply, or null on a failure (the connection dropped) or an error reply.
  Reply command(const Args& args) {
    auto replies = pipeline({args});
    return replies.empty() ? nullptr : std::move(replies[0]);
  }
};

RedisLink::RedisLink(config::RedisCacheSettings settings, OnEntry on_entry, std::size_t load_limit,
                     std::size_t max_entry_bytes)
    : settings_(std::move(settings)),
      on_entry_(std::move(on_entry)),
      load_limit_(load_limit),
      max_entry_bytes_(max_entry_bytes),
      origin_(random_origin()),
      command_(std::make_unique<Connection>(settings_, settings_.timeout)),
      reader_(std::make_unique<Connection>(settings_, settings_.timeout + kBlock)) {
  if (on_entry_) thread_ = std::thread([this] { read_stream(); });
}

RedisLink::~RedisLink() {
  {
    std::lock_guard lock(stop_mutex_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

bool RedisLink::put(std::string_view key, std::string_view value, milliseconds ttl) {
  const std::string full = settings_.key_prefix + std::string(key);
  const auto px = std::to_string(std::max<long long>(1, ttl.count()));
  std::lock_guard lock(command_mutex_);
  const bool ok = command_->command({"SET", full, value, "PX", px}) != nullptr;
  if (!ok) ++errors_;
  return ok;
}

std::optional<std::string> RedisLink::get(std::string_view key, std::size_t max_bytes) {
  const std::string full = settings_.key_prefix + std::string(key);
  std::lock_guard lock(command_mutex_);
  // GETRANGE, not GET: a value far beyond the bound is never read whole. A missing key is "".
  auto r = command_->command({"GETRANGE", full, "0", std::to_string(max_bytes)});
  if (!r) {
    ++errors_;
    return std::nullopt;
  }
  return std::string(text(r.get()));
}

bool RedisLink::publish(const Entry& e) {
  const std::string key = settings_.key_prefix + "entry:" + e.exact;
  const std::string_view embedding(reinterpret_cast<const char*>(e.embedding.data()),
                                   e.embedding.size() * sizeof(float));
  const auto ttl = std::to_string(e.ttl.count());
  const std::string stream = settings_.key_prefix + "stream";
  const std::string length = std::to_string(kStreamLength);
  std::lock_guard lock(command_mutex_);
  const auto replies = command_->pipeline(
      {{"HSET", key, "scope", e.scope, "exact", e.exact, "text", e.text, "model", e.answer.model,
        "content", e.answer.content, "finish", e.answer.finish_reason, "embedding", embedding},
       {"PEXPIRE", key, ttl},
       {"XADD", stream, "MAXLEN", "~", length, "*", "origin", origin_, "exact", e.exact}});
  const bool ok = replies.size() == 3 &&
                  std::ranges::all_of(replies, [](const Reply& r) { return r != nullptr; });
  if (!ok) ++errors_;
  return ok;
}

std::optional<RedisLink::Entry> RedisLink::fetch(const std::string& exact) {
  std::lock_guard lock(command_mutex_);
  return fetch_on(*command_, exact);
}

std::optional<RedisLink::Entry> RedisLink::fetch_on(Connection& c, const std::string& exact) {
  const std::string key = settings_.key_prefix + "entry:" + exact;
  const auto bound = std::to_string(max_entry_bytes_);
  Connection::Args args{"EVAL", kReadEntry, "1", key, bound};
  args.insert(args.end(), kFields.begin(), kFields.end());
  const auto r = c.command(args);
  if (!r) {
    ++errors_;
    return std::nullopt;
  }
  if (r->type == REDIS_REPLY_INTEGER) {  // larger than the bound: refused unread
    ++errors_;
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
// read twice replaces itself). Nullopt when Redis failed on the way (tried again on the next
// connection).
std::optional<std::string> RedisLink::load_stored() {
  auto& c = *reader_;
  auto tail = c.command({"XREVRANGE", settings_.key_prefix + "stream", "+", "-", "COUNT", "1"});
  if (!tail) return std::nullopt;
  std::string from = "0-0";
  if (tail->type == REDIS_REPLY_ARRAY && tail->elements == 1 &&
      tail->element[0]->type == REDIS_REPLY_ARRAY && tail->element[0]->elements > 0)
    from = text(tail->element[0]->element[0]);
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
    auto r = c.command({"SCAN", cursor, "MATCH", pattern, "COUNT", "256"});
    if (!r || r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
        r->element[1]->type != REDIS_REPLY_ARRAY)
      return std::nullopt;
    cursor = text(r->element[0]);
    const auto* keys = r->element[1];
    for (std::size_t k = 0; k < keys->elements && n < load_limit_; ++k) {
      const auto key = text(keys->element[k]);
      if (!key.starts_with(entry_prefix)) continue;
      auto e = fetch_on(c, std::string(key.substr(entry_prefix.size())));
      if (!c.context) return std::nullopt;  // Redis went away mid-way
      if (!e) continue;                     // expired meanwhile, or not an entry
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
      std::unique_lock lock(stop_mutex_);
      if (stopping_) return;
      if (!reader_->ready()) {
        stop_cv_.wait_for(lock, kFirstBackoff);
        continue;
      }
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
    auto r = reader_->command({"XREAD", "COUNT", kReadCount, "BLOCK",
                               std::to_string(kBlock.count()), "STREAMS", stream, last});
    if (!r) {
      ++errors_;
      continue;
    }
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
        if (auto e = fetch_on(*reader_, exact)) on_entry_(std::move(*e));
      }
    }
  }
}

}  // namespace mcpclass::route
