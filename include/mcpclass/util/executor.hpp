// Where slow work runs: an executor takes a job and runs it, now or later, on some thread.
// Thread-safety: ThreadPool::post and stop may be called from any thread.
#pragma once

#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>

#include <cstddef>
#include <functional>
#include <utility>

namespace mcpclass::util {

/// Runs a job. Must not block the caller on the job's completion.
using Executor = std::function<void(std::function<void()>)>;

/// A bounded set of worker threads for handlers and inference. Owns its threads: `stop()` (or the
/// destructor) finishes queued jobs and joins.
class ThreadPool {
 public:
  explicit ThreadPool(std::size_t threads) : pool_(threads == 0 ? 1 : threads) {}
  ~ThreadPool() { stop(); }
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  void post(std::function<void()> job) { boost::asio::post(pool_, std::move(job)); }
  /// An Executor that posts here; valid while the pool lives.
  Executor executor() {
    return [this](std::function<void()> job) { post(std::move(job)); };
  }
  /// Waits for queued jobs, then joins the threads. Idempotent.
  void stop() { pool_.join(); }

 private:
  boost::asio::thread_pool pool_;
};

}  // namespace mcpclass::util
