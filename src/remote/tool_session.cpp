// The session behind the remote classifiers: connection management, retries, circuit breaker.
#include "remote/tool_session.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <thread>

namespace mcpclass::remote::detail {

namespace {

/// Runs `f`, turning client errors into the remote classifier's error types.
template <typename F>
auto mapped(std::string_view what, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const client::TimeoutError& e) {
    throw RemoteTimeout(fmt::format("{}: {}", what, e.what()));
  } catch (const client::CertificateError& e) {
    throw RemoteUntrusted(fmt::format("{}: {}", what, e.what()));
  } catch (const client::HttpStatusError& e) {
    // A 4xx (a URL that is not an MCP endpoint, a refused request) will not change on retry.
    if (e.permanent()) throw RemoteProtocolError(fmt::format("{}: {}", what, e.what()));
    throw RemoteUnreachable(fmt::format("{}: {}", what, e.what()));
  } catch (const client::TransportError& e) {
    throw RemoteUnreachable(fmt::format("{}: {}", what, e.what()));
  } catch (const client::RpcError& e) {
    throw RemoteProtocolError(fmt::format("{}: {}", what, e.what()));
  } catch (const client::ProtocolViolation& e) {
    throw RemoteProtocolError(fmt::format("{}: {}", what, e.what()));
  }
}

RemoteClassifierOptions checked(RemoteClassifierOptions options) {
  if (options.timeout <= std::chrono::milliseconds::zero())
    options.timeout = std::chrono::milliseconds{5'000};
  return options;
}

}  // namespace

ToolSession::ToolSession(const RemoteClassifierOptions& options,
                         std::shared_ptr<client::ClientTransport> transport,
                         std::string client_name, std::function<void()> on_connect,
                         std::function<void(std::string_view method)> on_notification)
    : options_(checked(options)),
      transport_(std::move(transport)),
      on_connect_(std::move(on_connect)) {
  client::ClientOptions co;
  co.name = std::move(client_name);
  co.request_timeout = options_.timeout;
  if (!options_.protocol.empty()) client::choose_protocol(co, options_.protocol);
  if (on_notification)
    co.callbacks.on_notification = [f = std::move(on_notification)](
                                       std::string_view method, const json::value&) { f(method); };
  client_ = std::make_unique<client::Client>(transport_, std::move(co));
}

ToolSession::~ToolSession() {
  client_->close();
}

std::string ToolSession::where() const {
  return transport_->describe();
}

void ToolSession::connect(std::uint64_t seen) {
  std::lock_guard lock(connect_mutex_);
  if (generation_ != seen && client_->connected()) return;
  mapped(where(), [&] { client_->reconnect(); });
  on_connect_();
  ++generation_;
}

void ToolSession::connect_with_retries() {
  std::exception_ptr last;
  for (int i = 0; i <= options_.max_retries; ++i) {
    if (i > 0) std::this_thread::sleep_for(backoff(i));
    try {
      connect(generation_.load());
      return;
    } catch (const RemoteError& e) {
      if (!e.transient()) throw;
      last = std::current_exception();
    }
  }
  std::rethrow_exception(last);
}

json::object ToolSession::call_tool(const std::string& tool, json::object arguments) {
  return mapped(where(), [&] { return client_->call_tool(tool, std::move(arguments), {}); });
}

json::array ToolSession::list_tools() {
  return mapped(where(), [&] { return client_->list_tools(); });
}

void ToolSession::check_breaker() {
  std::lock_guard lock(mutex_);
  if (!open_until_) return;
  if (Clock::now() < *open_until_ || trial_running_)
    throw RemoteCircuitOpen(fmt::format("{}: circuit open after {} consecutive failures (last: {})",
                                        where(), consecutive_failures_, last_error_));
  trial_running_ = true;  // half-open: this call is the trial
}

void ToolSession::succeeded() {
  std::lock_guard lock(mutex_);
  consecutive_failures_ = 0;
  open_until_.reset();
  trial_running_ = false;
}

void ToolSession::failed(const RemoteError& e, bool counts) {
  std::lock_guard lock(mutex_);
  ++failures_;
  last_error_ = e.what();
  if (!counts) {
    trial_running_ = false;
    return;
  }
  ++consecutive_failures_;
  if (trial_running_ || consecutive_failures_ >= options_.breaker_failures)
    open_until_ = Clock::now() + options_.breaker_open;
  trial_running_ = false;
}

std::chrono::milliseconds ToolSession::backoff(int retry) {
  const double base =
      static_cast<double>(options_.retry_backoff.count()) * std::pow(2.0, retry - 1);
  const double capped = std::min(base, static_cast<double>(options_.max_backoff.count()));
  std::lock_guard lock(mutex_);
  std::uniform_real_distribution<double> jitter(0.5, 1.5);
  return std::chrono::milliseconds(static_cast<long long>(capped * jitter(rng_)));
}

void ToolSession::call(const std::function<void()>& attempt) {
  check_breaker();
  {
    std::lock_guard lock(mutex_);
    ++calls_;
  }
  std::exception_ptr last;
  for (int i = 0; i <= options_.max_retries; ++i) {
    if (i > 0) {
      std::this_thread::sleep_for(backoff(i));
      std::lock_guard lock(mutex_);
      ++retries_;
    }
    try {
      const auto seen = generation_.load();
      if (!client_->connected() || seen == 0) connect(seen);
      attempt();
      succeeded();
      return;
    } catch (const RemoteError& e) {
      if (!e.transient()) {
        failed(e, false);
        throw;
      }
      last = std::current_exception();
      note_error(e.what());
    }
  }
  try {
    std::rethrow_exception(last);
  } catch (const RemoteError& e) {
    failed(e, true);
    throw;
  }
}

void ToolSession::note_error(std::string message) {
  std::lock_guard lock(mutex_);
  last_error_ = std::move(message);
}

json::object ToolSession::stats() const {
  std::lock_guard lock(mutex_);
  const char* circuit = !open_until_                  ? "closed"
                        : Clock::now() < *open_until_ ? "open"
                                                      : "half_open";
  json::object out{{"endpoint", where()},
                   {"calls", calls_},
                   {"failures", failures_},
                   {"retries", retries_},
                   {"circuit", circuit}};
  if (!last_error_.empty()) out["last_error"] = last_error_;
  return out;
}

}  // namespace mcpclass::remote::detail
