#include "route/redis_pool.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace mcpclass::route {

RedisPool::RedisPool(RedisTarget target, Options options, Log log)
    : target_(std::move(target)),
      options_(std::move(options)),
      log_(std::move(log)),
      next_backoff_(options_.backoff_min) {}

RedisPool::~RedisPool() = default;

std::optional<std::vector<RedisReply>> RedisPool::run(
    const std::vector<RedisConnection::Args>& commands) {
  std::unique_ptr<RedisConnection> c;
  {
    std::unique_lock lock(mutex_);
    if (Clock::now() < retry_at_) return std::nullopt;
    const bool free = free_cv_.wait_for(
        lock, options_.timeout, [&] { return !idle_.empty() || made_ < options_.connections; });
    if (!free) {
      ++busy_;
      return std::nullopt;
    }
    if (!idle_.empty()) {
      c = std::move(idle_.back());
      idle_.pop_back();
    } else {
      c = std::make_unique<RedisConnection>(target_, options_.timeout);
      ++made_;
    }
    ++in_use_;
    if (in_use_ > peak_.load()) peak_ = in_use_;
  }
  auto replies = c->pipeline(commands);  // outside the lock: the round trip
  const bool ok = !replies.empty();
  {
    std::lock_guard lock(mutex_);
    --in_use_;
    idle_.push_back(std::move(c));
    if (ok) {
      succeeded();
    } else {
      failed(idle_.back()->error());
    }
  }
  free_cv_.notify_one();
  if (!ok) return std::nullopt;
  return replies;
}

// Under the lock.
void RedisPool::failed(std::string why) {
  const auto now = Clock::now();
  if (now < retry_at_) return;  // another connection's failure started this backoff already
  const auto wait = next_backoff_;
  retry_at_ = now + wait;
  next_backoff_ = std::min(next_backoff_ * 2, options_.backoff_max);
  const bool news = !failing_ || why != reason_;
  failing_ = true;
  if (news && log_)
    log_(fmt::format("redis {} ({}): {}; retrying in {} ms, then up to every {} ms", options_.name,
                     target_.address, why, wait.count(), options_.backoff_max.count()));
  reason_ = std::move(why);
}

// Under the lock.
void RedisPool::succeeded() {
  next_backoff_ = options_.backoff_min;
  if (!failing_) return;
  failing_ = false;
  reason_.clear();
  if (log_) log_(fmt::format("redis {} ({}): working again", options_.name, target_.address));
}

RedisPool::Clock::time_point RedisPool::retry_at() const {
  std::lock_guard lock(mutex_);
  return retry_at_;
}

std::size_t RedisPool::open() const {
  std::lock_guard lock(mutex_);
  std::size_t n = in_use_;
  for (const auto& c : idle_) n += c->connected();
  return n;
}

}  // namespace mcpclass::route
