#include "route/semantic_cache.hpp"

#include <fmt/format.h>
#include <boost/json.hpp>

#include <algorithm>
#include <cmath>

namespace mcpclass::route {

namespace json = boost::json;

namespace {

// What an entry costs besides its strings and vectors: list and map nodes, ids, times.
constexpr std::size_t kEntryOverhead = 256;
// Neighbours read first per semantic lookup; more (× 4 each round) while every one read is at or
// above the threshold and of another scope, so that near-duplicates stored under other
// parameters cannot hide a hit of the query's own scope.
constexpr std::size_t kNeighbours = 8;
// Upper bounds of the similarity histogram of hits (the last is +Inf).
constexpr std::array<double, 7> kSimilarityBounds = {0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99};
// How far from 1 the squared norm of an embedding read from Redis may be (the encoders' are
// unit vectors, and the index's inner product is their cosine only then).
constexpr double kUnitSlack = 1e-3;
// What a hash read from Redis may hold besides its query text and answer (scope, key, model,
// an embedding of up to 16,384 floats).
constexpr std::size_t kEntryFieldBytes = 64 * 1024;

}  // namespace

bool trusted_entry(const RedisLink::Entry& e, std::size_t dimension) {
  if (e.ttl.count() <= 0 || e.exact != exact_key(e.scope, e.text)) return false;
  if (e.embedding.empty()) return true;
  if (e.embedding.size() != dimension) return false;
  double norm = 0;
  for (const float x : e.embedding) {
    if (!std::isfinite(x)) return false;
    norm += double(x) * x;
  }
  return std::abs(norm - 1.0) <= kUnitSlack;
}

SemanticCache::SemanticCache(config::SemanticCacheSettings settings,
                             std::shared_ptr<const learned::SentenceEncoder> encoder,
                             RedisLink::Log log)
    : settings_(std::move(settings)), encoder_(std::move(encoder)) {
  if (encoder_) index_ = std::make_unique<CacheIndex>(encoder_->dimension());
  if (settings_.backend_type == "redis")
    link_ = std::make_unique<RedisLink>(
        settings_.redis, "route.semantic_cache.redis",
        [this](RedisLink::Entry e) { insert_shared(std::move(e), Clock::now()); },
        settings_.max_entries,  // the entries stored before this instance: no more than it keeps
        2 * settings_.max_entry_bytes + kEntryFieldBytes,  // a query and an answer at most
        std::move(log));
}

SemanticCache::~SemanticCache() {
  link_.reset();  // joins the reader thread before the entries go
}

bool SemanticCache::fits(const config::SemanticCacheSettings& settings,
                         const learned::SentenceEncoder* encoder) const {
  if (settings.to_json() != settings_.to_json()) return false;
  if (!encoder_ || !encoder) return !encoder_ && !encoder;
  return encoder_->model_id() == encoder->model_id();
}

std::optional<SemanticCache::Hit> SemanticCache::lookup(CacheQuery& query, double threshold,
                                                        Clock::time_point now) {
  {
    std::lock_guard lock(mutex_);
    if (auto it = by_exact_.find(query.exact); it != by_exact_.end()) {
      const auto& e = *it->second;
      if (e.expires <= now) {
        erase(it->second);
      } else if (e.scope == query.scope && e.text == query.text) {  // not the key alone
        lru_.splice(lru_.begin(), lru_, it->second);
        count_hit(1.0, true);
        return Hit{e.answer, 1.0, true};
      }
    }
  }
  // Another instance may have stored it before this one followed the stream.
  if (auto shared = link_ ? link_->fetch(query.exact) : std::nullopt;
      shared && shared->scope == query.scope && shared->text == query.text) {
    auto answer = shared->answer;
    insert_shared(std::move(*shared), now);
    std::lock_guard lock(mutex_);
    count_hit(1.0, true);
    return Hit{std::move(answer), 1.0, true};
  }
  if (!encoder_) {
    std::lock_guard lock(mutex_);
    ++misses_;
    return std::nullopt;
  }
  try {
    const auto t0 = Clock::now();
    query.embedding = encoder_->encode(std::span<const std::string>(&query.text, 1));
    query.encode_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  } catch (const std::exception&) {
    std::lock_guard lock(mutex_);
    ++errors_["encoder"];
    ++misses_;
    return std::nullopt;
  }
  std::lock_guard lock(mutex_);
  if (auto hit = nearest(query, threshold, now)) return hit;
  ++misses_;
  return std::nullopt;
}

std::optional<SemanticCache::Hit> SemanticCache::nearest(const CacheQuery& query, double threshold,
                                                         Clock::time_point now) {
  for (std::size_t k = kNeighbours;; k *= 4) {
    const auto found = index_->search(query.embedding, k);
    for (const auto& [id, similarity] : found) {
      if (!(similarity >= threshold)) return std::nullopt;  // NaN included
      const auto it = by_id_.find(id);
      if (it == by_id_.end() || it->second->scope != query.scope) continue;
      if (it->second->expires <= now) {
        erase(it->second);
        continue;
      }
      lru_.splice(lru_.begin(), lru_, it->second);
      count_hit(similarity, false);
      return Hit{it->second->answer, similarity, false};
    }
    if (found.size() < k || k >= lru_.size()) return std::nullopt;  // read them all
  }
}

bool SemanticCache::store(const CacheQuery& query, CachedAnswer answer,
                          std::chrono::milliseconds ttl, Clock::time_point now) {
  Entry e;
  e.scope = query.scope;
  e.exact = query.exact;
  e.text = query.text;
  if (index_ && query.embedding.size() == index_->dimension()) e.embedding = query.embedding;
  e.answer = std::move(answer);
  e.expires = now + ttl;
  if (!link_) return insert(std::move(e), now);
  RedisLink::Entry shared{e.scope, e.exact, e.text, e.embedding, e.answer, ttl};
  if (!insert(std::move(e), now)) return false;
  // On the link's writers: store() runs on an upstream's I/O thread. A failure is counted by
  // the link; this instance still has the answer.
  link_->publish_later(std::move(shared));
  return true;
}

void SemanticCache::insert_shared(RedisLink::Entry e, Clock::time_point now) {
  if (!trusted_entry(e, index_ ? index_->dimension() : 0)) {
    std::lock_guard lock(mutex_);
    ++errors_["redis_entry"];
    return;
  }
  insert(Entry{0, std::move(e.scope), std::move(e.exact), std::move(e.text), std::move(e.embedding),
               std::move(e.answer), now + e.ttl, 0},
         now);
}

bool SemanticCache::insert(Entry e, Clock::time_point now) {
  const std::size_t answer_bytes =
      e.answer.content.size() + e.answer.model.size() + e.answer.finish_reason.size();
  if (index_ && e.embedding.size() != index_->dimension()) e.embedding.clear();
  // The embedding twice: the entry's copy (for rebuilds) and the index's.
  e.bytes = kEntryOverhead + e.scope.size() + 2 * e.exact.size() + e.text.size() + answer_bytes +
            2 * e.embedding.size() * sizeof(float);
  if (answer_bytes > settings_.max_entry_bytes || e.text.size() > settings_.max_entry_bytes ||
      e.bytes > settings_.max_bytes) {
    skipped("too_large");
    return false;
  }
  std::lock_guard lock(mutex_);
  if (auto it = by_exact_.find(e.exact); it != by_exact_.end()) erase(it->second);
  e.id = next_id_++;
  lru_.push_front(std::move(e));
  const auto it = lru_.begin();
  by_id_.emplace(it->id, it);
  by_exact_.emplace(it->exact, it);
  bytes_ += it->bytes;
  if (!it->embedding.empty()) index_->add(it->id, it->embedding);
  evict_to_bounds(now);
  return true;
}

void SemanticCache::count_hit(double similarity, bool exact) {
  ++(exact ? exact_hits_ : semantic_hits_);
  std::size_t b = 0;
  while (b < kSimilarityBounds.size() && similarity > kSimilarityBounds[b]) ++b;
  ++similarity_buckets_[b];
  similarity_sum_ += similarity;
}

void SemanticCache::skipped(std::string_view reason) {
  std::lock_guard lock(mutex_);
  auto it = skipped_.find(reason);
  if (it == skipped_.end()) it = skipped_.emplace(std::string(reason), 0).first;
  ++it->second;
}

void SemanticCache::erase(Lru::iterator it) {
  if (index_ && !it->embedding.empty()) index_->remove(it->id);
  bytes_ -= it->bytes;
  by_id_.erase(it->id);
  by_exact_.erase(it->exact);
  lru_.erase(it);
  if (index_ && index_->stale()) rebuild_index();
}

void SemanticCache::evict_to_bounds(Clock::time_point now) {
  // Expired entries at the cold end go first, uncounted; then the least recently used.
  while (!lru_.empty() && lru_.back().expires <= now) erase(std::prev(lru_.end()));
  while (!lru_.empty() && (bytes_ > settings_.max_bytes || lru_.size() > settings_.max_entries)) {
    erase(std::prev(lru_.end()));
    ++evictions_;
  }
}

void SemanticCache::rebuild_index() {
  index_->clear();
  for (const auto& e : lru_)
    if (!e.embedding.empty()) index_->add(e.id, e.embedding);
}

std::size_t SemanticCache::entries() const {
  std::lock_guard lock(mutex_);
  return lru_.size();
}
std::size_t SemanticCache::bytes() const {
  std::lock_guard lock(mutex_);
  return bytes_;
}
std::uint64_t SemanticCache::evictions() const {
  std::lock_guard lock(mutex_);
  return evictions_;
}

std::string SemanticCache::prometheus() const {
  std::lock_guard lock(mutex_);
  std::string out = fmt::format(
      "# HELP mcpclass_route_cache_hits_total Requests answered from the semantic cache, by "
      "match.\n# TYPE mcpclass_route_cache_hits_total counter\n"
      "mcpclass_route_cache_hits_total{{match=\"exact\"}} {}\n"
      "mcpclass_route_cache_hits_total{{match=\"semantic\"}} {}\n"
      "# HELP mcpclass_route_cache_misses_total Cacheable requests the cache had no answer "
      "for.\n# TYPE mcpclass_route_cache_misses_total counter\nmcpclass_route_cache_misses_total "
      "{}\n"
      "# HELP mcpclass_route_cache_entries Answers the cache holds.\n"
      "# TYPE mcpclass_route_cache_entries gauge\nmcpclass_route_cache_entries {}\n"
      "# HELP mcpclass_route_cache_bytes Bytes the cached answers hold.\n"
      "# TYPE mcpclass_route_cache_bytes gauge\nmcpclass_route_cache_bytes {}\n"
      "# HELP mcpclass_route_cache_evictions_total Answers evicted for space.\n"
      "# TYPE mcpclass_route_cache_evictions_total counter\n"
      "mcpclass_route_cache_evictions_total {}\n"
      "# HELP mcpclass_route_cache_hit_similarity Similarity of the query to the stored one, "
      "per hit (1 for exact).\n# TYPE mcpclass_route_cache_hit_similarity histogram\n",
      exact_hits_, semantic_hits_, misses_, lru_.size(), bytes_, evictions_);
  std::uint64_t cumulative = 0;
  for (std::size_t b = 0; b < similarity_buckets_.size(); ++b) {
    cumulative += similarity_buckets_[b];
    const auto le = b < kSimilarityBounds.size() ? fmt::format("{}", kSimilarityBounds[b])
                                                 : std::string("+Inf");
    out +=
        fmt::format("mcpclass_route_cache_hit_similarity_bucket{{le=\"{}\"}} {}\n", le, cumulative);
  }
  out += fmt::format(
      "mcpclass_route_cache_hit_similarity_sum {}\nmcpclass_route_cache_hit_similarity_count "
      "{}\n",
      similarity_sum_, cumulative);
  out +=
      "# HELP mcpclass_route_cache_skipped_total Answers not stored, by reason.\n"
      "# TYPE mcpclass_route_cache_skipped_total counter\n";
  for (const auto& [reason, n] : skipped_)
    out += fmt::format("mcpclass_route_cache_skipped_total{{reason=\"{}\"}} {}\n", reason, n);
  out +=
      "# HELP mcpclass_route_cache_errors_total Cache operations that failed (the request went "
      "on as a miss), by part.\n# TYPE mcpclass_route_cache_errors_total counter\n";
  for (const auto& [part, n] : errors_)
    out += fmt::format("mcpclass_route_cache_errors_total{{part=\"{}\"}} {}\n", part, n);
  if (link_)
    out += fmt::format(
        "mcpclass_route_cache_errors_total{{part=\"redis\"}} {}\n"
        "mcpclass_route_cache_errors_total{{part=\"redis_busy\"}} {}\n"
        "# HELP mcpclass_route_cache_redis_connections_peak The most Redis connections the "
        "requests' commands held at once (route.semantic_cache.redis.connections at most).\n"
        "# TYPE mcpclass_route_cache_redis_connections_peak gauge\n"
        "mcpclass_route_cache_redis_connections_peak {}\n",
        link_->errors(), link_->busy(), link_->peak_connections());
  if (link_)
    out += fmt::format(
        "# HELP mcpclass_route_cache_loaded_total Entries read from Redis that were stored "
        "before this instance followed its stream.\n"
        "# TYPE mcpclass_route_cache_loaded_total counter\nmcpclass_route_cache_loaded_total {}\n",
        link_->loaded());
  return out;
}

void CacheTicket::capture(std::string_view data) {
  if (overflow) return;
  if (captured.size() + data.size() > cache->settings().max_entry_bytes) {
    overflow = true;
    captured.clear();
    captured.shrink_to_fit();
    return;
  }
  captured.append(data);
}

void CacheTicket::finish(unsigned status, std::string_view body) {
  if (status < 200 || status >= 300) return cache->skipped("status");
  if (body.empty()) body = captured;
  if (overflow || body.size() > cache->settings().max_entry_bytes)
    return cache->skipped("too_large");
  auto answer = answer_from_json(body);
  if (!answer) answer = answer_from_sse(body);
  if (!answer) return cache->skipped("not_text");
  cache->store(query, std::move(*answer), ttl);
}

std::optional<CacheTicket> open_ticket(const std::shared_ptr<SemanticCache>& cache,
                                       const RouteEvaluation& e, const Router& router) {
  if (!cache) return std::nullopt;
  const auto& s = cache->settings();
  double threshold = s.similarity_threshold;
  auto ttl = s.ttl;
  for (const auto& d : router.router_settings().decisions) {
    if (d.name != e.decision) continue;
    if (!d.cache_enabled) return std::nullopt;
    threshold = d.cache_similarity_threshold.value_or(threshold);
    ttl = d.cache_ttl.value_or(ttl);
  }
  // Besides the body, the upstream gets the decision's header mutations.
  json::array added, removed(e.upstream_headers_removed.begin(), e.upstream_headers_removed.end());
  for (const auto& [name, value] : e.upstream_headers) added.push_back(json::array{name, value});
  const auto route = json::serialize(json::array{json::value(e.model), added, removed});
  auto query =
      cache_query(router.upstream_request(e, e.model), route, router.route_settings().text);
  if (!query) return std::nullopt;
  return CacheTicket{cache, std::move(*query), threshold, ttl, {}, false};
}

}  // namespace mcpclass::route
