// The remote classifier: connection management, retries, circuit breaker, category cache.
#include "mcpclass/remote/remote_classifier.hpp"

#include "mcpclass/client/client.hpp"
#include "remote/remote_detail.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <mutex>
#include <random>
#include <thread>

namespace mcpclass::remote {

namespace {

using Clock = std::chrono::steady_clock;

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

}  // namespace

struct RemoteClassifier::Impl {
  RemoteClassifierOptions options;
  std::shared_ptr<client::ClientTransport> transport;
  std::unique_ptr<client::Client> client;
  std::string tool;

  std::mutex connect_mutex;  // one (re)connect at a time
  std::atomic<std::uint64_t> generation{0};
  std::atomic<bool> categories_dirty{false};

  mutable std::mutex mutex;                                           // everything below
  std::vector<std::shared_ptr<const classify::CategorySet>> history;  // keeps references valid
  std::shared_ptr<const classify::CategorySet> current;
  std::size_t remote_count = 0;
  Clock::time_point fetched_at{};
  int consecutive_failures = 0;
  std::optional<Clock::time_point> open_until;
  bool trial_running = false;
  std::uint64_t calls = 0, failures = 0, retries = 0;
  std::string last_model, last_error, last_log;
  std::mt19937_64 rng{std::random_device{}()};

  Impl(RemoteClassifierOptions o, std::shared_ptr<client::ClientTransport> t)
      : options(std::move(o)), transport(std::move(t)) {
    if (options.timeout <= std::chrono::milliseconds::zero())
      options.timeout = std::chrono::milliseconds{5'000};
    client::ClientOptions co;
    co.name = "mcpclass-remote-classifier";
    co.request_timeout = options.timeout;
    if (!options.protocol.empty()) client::choose_protocol(co, options.protocol);
    co.callbacks.on_notification = [this](std::string_view method, const json::value&) {
      if (method.ends_with("list_changed")) categories_dirty = true;
    };
    co.callbacks.on_log = [this](std::string_view line) {
      std::lock_guard lock(mutex);
      last_log = line;
    };
    client = std::make_unique<client::Client>(transport, std::move(co));
  }

  std::string where() const { return transport->describe(); }

  /// (Re)connects unless another caller already did since `seen`.
  void connect(std::uint64_t seen) {
    std::lock_guard lock(connect_mutex);
    if (generation != seen && client->connected()) return;
    mapped(where(), [&] { client->reconnect(); });
    const json::array tools = mapped(where(), [&] { return client->list_tools(); });
    tool = discover_classification_tool(tools, options.tool);
    fetch_categories();
    ++generation;
  }

  void fetch_categories() {
    const json::object result = mapped(
        where(), [&] { return client->call_tool(options.categories_tool, json::object{}, {}); });
    std::size_t count = 0;
    auto set = std::make_shared<const classify::CategorySet>(
        detail::parse_categories(detail::tool_payload(result, options.categories_tool),
                                 options.fallback_category, options.num_categories, count));
    std::lock_guard lock(mutex);
    if (!current || !(*current == *set)) {
      history.push_back(set);
      current = set;
    }
    remote_count = count;
    fetched_at = Clock::now();
    categories_dirty = false;
  }

  void ensure_connected() {
    const auto seen = generation.load();
    if (!client->connected() || seen == 0) connect(seen);
  }

  void maybe_refresh() {
    bool due;
    {
      std::lock_guard lock(mutex);
      due = !options.cache_categories || categories_dirty ||
            Clock::now() - fetched_at >= options.refresh_interval;
    }
    if (!due || !client->connected()) return;
    try {
      fetch_categories();
    } catch (const RemoteError& e) {
      std::lock_guard lock(mutex);
      last_error = fmt::format("category refresh failed (keeping the cached set): {}", e.what());
    }
  }

  void check_breaker() {
    std::lock_guard lock(mutex);
    if (!open_until) return;
    if (Clock::now() < *open_until || trial_running)
      throw RemoteCircuitOpen(
          fmt::format("{}: circuit open after {} consecutive failures (last: {})", where(),
                      consecutive_failures, last_error));
    trial_running = true;  // half-open: this call is the trial
  }

  void succeeded(const classify::Classification& c) {
    std::lock_guard lock(mutex);
    consecutive_failures = 0;
    open_until.reset();
    trial_running = false;
    last_model = c.model;
  }

  void failed(const RemoteError& e, bool counts) {
    std::lock_guard lock(mutex);
    ++failures;
    last_error = e.what();
    if (!counts) {
      trial_running = false;
      return;
    }
    ++consecutive_failures;
    if (trial_running || consecutive_failures >= options.breaker_failures)
      open_until = Clock::now() + options.breaker_open;
    trial_running = false;
  }

  std::chrono::milliseconds backoff(int retry) {
    const double base =
        static_cast<double>(options.retry_backoff.count()) * std::pow(2.0, retry - 1);
    const double capped = std::min(base, static_cast<double>(options.max_backoff.count()));
    std::lock_guard lock(mutex);
    std::uniform_real_distribution<double> jitter(0.5, 1.5);
    return std::chrono::milliseconds(static_cast<long long>(capped * jitter(rng)));
  }

  classify::Classification attempt(std::string_view text) {
    ensure_connected();
    maybe_refresh();
    const json::object result = mapped(where(), [&] {
      return client->call_tool(tool, json::object{{"text", text}, {"with_probabilities", true}},
                               {});
    });
    std::shared_ptr<const classify::CategorySet> cats;
    std::size_t count;
    {
      std::lock_guard lock(mutex);
      cats = current;
      count = remote_count;
    }
    try {
      return detail::parse_classification(detail::tool_payload(result, tool), *cats, count,
                                          options.confidence_threshold, options.fallback_category);
    } catch (const RemoteInvalidResult&) {
      categories_dirty = true;  // maybe the server's categories changed
      throw;
    }
  }

  classify::Classification classify(std::string_view text) {
    check_breaker();
    {
      std::lock_guard lock(mutex);
      ++calls;
    }
    std::exception_ptr last;
    for (int i = 0; i <= options.max_retries; ++i) {
      if (i > 0) {
        std::this_thread::sleep_for(backoff(i));
        std::lock_guard lock(mutex);
        ++retries;
      }
      try {
        classify::Classification c = attempt(text);
        succeeded(c);
        return c;
      } catch (const RemoteError& e) {
        if (!e.transient()) {
          failed(e, false);
          throw;
        }
        last = std::current_exception();
        std::lock_guard lock(mutex);
        last_error = e.what();
      }
    }
    try {
      std::rethrow_exception(last);
    } catch (const RemoteError& e) {
      failed(e, true);
      throw;
    }
  }
};

RemoteClassifier::RemoteClassifier(RemoteClassifierOptions options)
    : RemoteClassifier(options, make_remote_transport(options)) {}

RemoteClassifier::RemoteClassifier(RemoteClassifierOptions options,
                                   std::shared_ptr<client::ClientTransport> transport)
    : impl_(std::make_unique<Impl>(std::move(options), std::move(transport))) {
  std::exception_ptr last;
  for (int i = 0; i <= impl_->options.max_retries; ++i) {
    if (i > 0) std::this_thread::sleep_for(impl_->backoff(i));
    try {
      impl_->connect(impl_->generation.load());
      return;
    } catch (const RemoteError& e) {
      if (!e.transient()) throw;
      last = std::current_exception();
    }
  }
  std::rethrow_exception(last);
}

RemoteClassifier::~RemoteClassifier() {
  impl_->client->close();
}

const classify::CategorySet& RemoteClassifier::categories() const {
  std::lock_guard lock(impl_->mutex);
  return *impl_->current;
}

classify::Classification RemoteClassifier::classify(std::string_view text,
                                                    const classify::ClassifyOptions&) const {
  return impl_->classify(text);
}

json::object RemoteClassifier::info() const {
  std::lock_guard lock(impl_->mutex);
  const auto now = Clock::now();
  const char* circuit = !impl_->open_until         ? "closed"
                        : now < *impl_->open_until ? "open"
                                                   : "half_open";
  json::object out{
      {"kind", "remote"},
      {"model", impl_->last_model.empty() ? "remote:" + impl_->tool : impl_->last_model},
      {"index_size", 0},
      {"endpoint", impl_->where()},
      {"tool", impl_->tool},
      {"categories", impl_->current ? impl_->current->size() : 0},
      {"calls", impl_->calls},
      {"failures", impl_->failures},
      {"retries", impl_->retries},
      {"circuit", circuit}};
  if (!impl_->last_error.empty()) out["last_error"] = impl_->last_error;
  return out;
}

const std::string& RemoteClassifier::tool_name() const {
  return impl_->tool;
}

void RemoteClassifier::refresh_categories() const {
  impl_->fetch_categories();
}

}  // namespace mcpclass::remote
