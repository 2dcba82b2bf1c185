// Sharded LRU of classification results.
#include "mcpclass/classify/cached_classifier.hpp"

#include <algorithm>
#include <functional>
#include <list>
#include <mutex>
#include <unordered_map>
#include <utility>

namespace mcpclass::classify {

namespace {
constexpr std::size_t kShards = 16;

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}
}  // namespace

std::string normalize_for_cache(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 1);  // + the options byte the cache appends, without a reallocation
  bool pending_space = false;
  for (const char c : text) {
    if (is_space(c)) {
      pending_space = !out.empty();
      continue;
    }
    if (pending_space) out.push_back(' ');
    pending_space = false;
    out.push_back(c);
  }
  return out;
}

struct CachedClassifier::Shard {
  using Clock = std::chrono::steady_clock;
  struct Entry {
    std::string key;
    Classification result;
    Clock::time_point stored;
    std::size_t bytes = 0;  // entry_bytes(), kept so that removal subtracts what was added
  };
  using Lru = std::list<Entry>;
  std::mutex mutex;
  Lru lru;                                                    // most recent first
  std::unordered_map<std::string_view, Lru::iterator> index;  // views into lru keys
  std::size_t bytes = 0;                                      // sum of the entries' bytes

  // What an entry costs: its list and index nodes and the heap blocks of its key and result.
  static std::size_t entry_bytes(const std::string& key, const Classification& r) {
    constexpr std::size_t kNodes = 2 * sizeof(void*) + sizeof(Entry) + 2 * sizeof(void*) +
                                   sizeof(std::string_view) + sizeof(Lru::iterator);
    std::size_t heap = key.capacity() + r.category.capacity() + r.model.capacity() +
                       r.probabilities.capacity() * sizeof(double);
    for (const auto& top : r.decision.top_categories) heap += top.name.capacity();
    return kNodes + heap;
  }

  void erase(std::unordered_map<std::string_view, Lru::iterator>::iterator it) {
    bytes -= it->second->bytes;
    lru.erase(it->second);
    index.erase(it);
  }
};

CachedClassifier::CachedClassifier(std::shared_ptr<const Classifier> inner, CacheOptions options)
    : ForwardingClassifier(std::move(inner), "CachedClassifier"),
      options_(options),
      shards_(std::make_unique<Shard[]>(kShards)),
      per_shard_(std::max<std::size_t>(1, (options.entries + kShards - 1) / kShards)),
      bytes_per_shard_(options.max_bytes / kShards) {}

CachedClassifier::~CachedClassifier() = default;

namespace {

// The options are the key's last byte; the text the inner classifier sees is the rest.
std::string cache_key(std::string_view text, const ClassifyOptions& options) {
  std::string key = normalize_for_cache(text);
  key.push_back(options.with_probabilities ? '\1' : '\0');
  return key;
}

}  // namespace

bool CachedClassifier::holds(std::string_view text, const ClassifyOptions& options) const {
  const std::string key = cache_key(text, options);
  Shard& shard = shards_[std::hash<std::string>{}(key) % kShards];
  std::lock_guard lock(shard.mutex);
  const auto it = shard.index.find(key);
  return it != shard.index.end() &&
         (options_.ttl.count() == 0 || Shard::Clock::now() - it->second->stored < options_.ttl);
}

Classification CachedClassifier::classify(std::string_view text,
                                          const ClassifyOptions& options) const {
  std::string key = cache_key(text, options);
  const std::string_view normalized(key.data(), key.size() - 1);
  Shard& shard = shards_[std::hash<std::string>{}(key) % kShards];
  const auto now = Shard::Clock::now();
  {
    std::lock_guard lock(shard.mutex);
    if (auto it = shard.index.find(key); it != shard.index.end()) {
      const bool fresh = options_.ttl.count() == 0 || now - it->second->stored < options_.ttl;
      if (fresh) {
        shard.lru.splice(shard.lru.begin(), shard.lru, it->second);
        ++hits_;
        Classification hit = it->second->result;
        hit.cached = true;
        return hit;
      }
      shard.erase(it);
    }
  }
  ++misses_;
  // Outside the lock: inference may be slow. Two callers may both miss; the second store wins.
  Classification result = inner().classify(normalized, options);
  const std::size_t bytes = Shard::entry_bytes(key, result);
  if (bytes > bytes_per_shard_) return result;  // would evict the whole shard and still not fit
  std::lock_guard lock(shard.mutex);
  if (auto it = shard.index.find(key); it != shard.index.end()) shard.erase(it);
  shard.lru.push_front({std::move(key), result, now, bytes});
  shard.index.emplace(shard.lru.front().key, shard.lru.begin());
  shard.bytes += bytes;
  while (shard.lru.size() > per_shard_ || shard.bytes > bytes_per_shard_) {
    shard.erase(shard.index.find(shard.lru.back().key));
    ++evictions_;
  }
  return result;
}

std::size_t CachedClassifier::size() const {
  std::size_t n = 0;
  for (std::size_t i = 0; i < kShards; ++i) {
    std::lock_guard lock(shards_[i].mutex);
    n += shards_[i].lru.size();
  }
  return n;
}

std::size_t CachedClassifier::bytes() const {
  std::size_t n = 0;
  for (std::size_t i = 0; i < kShards; ++i) {
    std::lock_guard lock(shards_[i].mutex);
    n += shards_[i].bytes;
  }
  return n;
}

json::object CachedClassifier::info() const {
  json::object out = inner().info();
  out["cache"] = json::object{{"entries", options_.entries},
                              {"max_bytes", options_.max_bytes},
                              {"size", size()},
                              {"bytes", bytes()},
                              {"hits", hits_.load()},
                              {"misses", misses_.load()},
                              {"evictions", evictions_.load()}};
  return out;
}

}  // namespace mcpclass::classify
