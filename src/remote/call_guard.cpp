// Retries, backoff and the circuit breaker of the remote classifiers.
#include "remote/call_guard.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <thread>

namespace mcpclass::remote::detail {

CallGuard::CallGuard(const RemoteClassifierOptions& options, std::string where)
    : where_(std::move(where)),
      max_retries_(options.max_retries),
      retry_backoff_(options.retry_backoff),
      max_backoff_(options.max_backoff),
      breaker_failures_(options.breaker_failures),
      breaker_open_(options.breaker_open) {}

void CallGuard::check_breaker() {
  std::lock_guard lock(mutex_);
  if (!open_until_) return;
  if (Clock::now() < *open_until_ || trial_running_)
    throw RemoteCircuitOpen(fmt::format("{}: circuit open after {} consecutive failures (last: {})",
                                        where_, consecutive_failures_, last_error_));
  trial_running_ = true;  // half-open: this call is the trial
}

void CallGuard::succeeded() {
  std::lock_guard lock(mutex_);
  consecutive_failures_ = 0;
  open_until_.reset();
  trial_running_ = false;
}

void CallGuard::failed(const RemoteError& e, bool counts) {
  std::lock_guard lock(mutex_);
  ++failures_;
  last_error_ = e.what();
  if (!counts) {
    trial_running_ = false;
    return;
  }
  ++consecutive_failures_;
  if (trial_running_ || consecutive_failures_ >= breaker_failures_)
    open_until_ = Clock::now() + breaker_open_;
  trial_running_ = false;
}

std::chrono::milliseconds CallGuard::backoff(int retry) {
  const double base = static_cast<double>(retry_backoff_.count()) * std::pow(2.0, retry - 1);
  const double capped = std::min(base, static_cast<double>(max_backoff_.count()));
  std::lock_guard lock(mutex_);
  std::uniform_real_distribution<double> jitter(0.5, 1.5);
  return std::chrono::milliseconds(static_cast<long long>(capped * jitter(rng_)));
}

void CallGuard::retry(const std::function<void()>& attempt, bool counted) {
  for (int i = 0;; ++i) {
    if (i > 0) {
      std::this_thread::sleep_for(backoff(i));
      if (counted) {
        std::lock_guard lock(mutex_);
        ++retries_;
      }
    }
    try {
      attempt();
      return;
    } catch (const RemoteError& e) {
      if (!e.transient() || i >= max_retries_) throw;
      if (counted) note_error(e.what());
    }
  }
}

void CallGuard::call(const std::function<void()>& attempt) {
  check_breaker();
  {
    std::lock_guard lock(mutex_);
    ++calls_;
  }
  try {
    retry(attempt, true);
  } catch (const RemoteError& e) {
    // Only transport failures and timeouts open the breaker: a bad answer is the peer's bug,
    // not a sign that it is down.
    failed(e, e.transient());
    throw;
  }
  succeeded();
}

void CallGuard::note_error(std::string message) {
  std::lock_guard lock(mutex_);
  last_error_ = std::move(message);
}

json::object CallGuard::stats() const {
  std::lock_guard lock(mutex_);
  const char* circuit = !open_until_                  ? "closed"
                        : Clock::now() < *open_until_ ? "open"
                                                      : "half_open";
  json::object out{
      {"calls", calls_}, {"failures", failures_}, {"retries", retries_}, {"circuit", circuit}};
  if (!last_error_.empty()) out["last_error"] = last_error_;
  return out;
}

}  // namespace mcpclass::remote::detail
