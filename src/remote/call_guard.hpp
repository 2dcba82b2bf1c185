// Internal: what every remote classifier does around one call to its peer, whatever the contract
// (MCP through a ToolSession, http_classify over plain HTTP): retries of transient failures with
// exponential backoff and jitter, the circuit breaker, and the counters /health shows.
// Thread-safety: every member may be called concurrently.
#pragma once

#include "mcpclass/remote/remote_classifier.hpp"

#include <chrono>
#include <functional>
#include <mutex>
#include <optional>
#include <random>
#include <string>

namespace mcpclass::remote::detail {

class CallGuard {
 public:
  /// Reads max_retries, retry_backoff, max_backoff, breaker_failures and breaker_open; `where`
  /// (the peer) starts the breaker's message.
  CallGuard(const RemoteClassifierOptions& options, std::string where);

  /// Runs `attempt` behind the breaker (RemoteCircuitOpen while open; one trial call when half
  /// open), retrying transient RemoteErrors. Counts the call, its retries and its failure. Throws
  /// the last RemoteError.
  void call(const std::function<void()>& attempt);
  /// Runs `attempt`, retrying transient RemoteErrors as call() does, without the breaker and the
  /// counters (a first connect). Throws the last RemoteError.
  void retrying(const std::function<void()>& attempt) { retry(attempt, false); }
  /// A problem outside call() (a failed refresh) shown as last_error.
  void note_error(std::string message);
  /// {calls, failures, retries, circuit[, last_error]}.
  json::object stats() const;

 private:
  void retry(const std::function<void()>& attempt, bool counted);
  void check_breaker();
  void succeeded();
  void failed(const RemoteError& e, bool counts);
  std::chrono::milliseconds backoff(int retry);

  using Clock = std::chrono::steady_clock;
  const std::string where_;
  const int max_retries_;
  const std::chrono::milliseconds retry_backoff_, max_backoff_;
  const int breaker_failures_;
  const std::chrono::milliseconds breaker_open_;

  mutable std::mutex mutex_;  // everything below
  int consecutive_failures_ = 0;
  std::optional<Clock::time_point> open_until_;
  bool trial_running_ = false;
  std::uint64_t calls_ = 0, failures_ = 0, retries_ = 0;
  std::string last_error_;
  std::mt19937_64 rng_{std::random_device{}()};
};

}  // namespace mcpclass::remote::detail
