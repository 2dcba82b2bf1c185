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
  out.reserve(text.size());
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
  };
  std::mutex mutex;
  std::list<Entry> lru;                                                    // most recent first
  std::unordered_map<std::string_view, std::list<Entry>::iterator> index;  // views into lru keys
};

CachedClassifier::CachedClassifier(std::shared_ptr<const Classifier> inner, CacheOptions options)
    : inner_(std::move(inner)),
      options_(options),
      shards_(std::make_unique<Shard[]>(kShards)),
      per_shard_(std::max<std::size_t>(1, (options.entries + kShards - 1) / kShards)) {}

CachedClassifier::~CachedClassifier() = default;

Classification CachedClassifier::classify(std::string_view text,
                                          const ClassifyOptions& options) const {
  // The options are the key's last byte; the text the inner classifier sees is the rest.
  std::string key = normalize_for_cache(text);
  key.push_back(options.with_probabilities ? '\1' : '\0');
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
        return it->second->result;
      }
      shard.lru.erase(it->second);
      shard.index.erase(it);
    }
  }
  ++misses_;
  // Outside the lock: inference may be slow. Two callers may both miss; the second store wins.
  Classification result = inner_->classify(normalized, options);
  std::lock_guard lock(shard.mutex);
  if (auto it = shard.index.find(key); it != shard.index.end()) {
    shard.lru.erase(it->second);
    shard.index.erase(it);
  }
  shard.lru.push_front({std::move(key), result, now});
  shard.index.emplace(shard.lru.front().key, shard.lru.begin());
  while (shard.lru.size() > per_shard_) {
    shard.index.erase(shard.lru.back().key);
    shard.lru.pop_back();
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

json::object CachedClassifier::info() const {
  json::object out = inner_->info();
  out["cache"] = json::object{{"entries", options_.entries},
                              {"size", size()},
                              {"hits", hits_.load()},
                              {"misses", misses_.load()}};
  return out;
}

}  // namespace mcpclass::classify
