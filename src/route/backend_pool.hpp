// Internal: one model's upstream endpoints (`backend_refs`, or its one `base_url`) as a pool:
// weighted turns (WeightedPicker), passive health (EndpointHealth, at most
// max_ejection_percent of the pool out at once), optional active health checks, and each
// endpoint's own I/O threads and keep-alive connections (Lane). docs/route.md, "Backend pools".
#pragma once

#include "mcpclass/config/route_settings.hpp"
#include "mcpclass/util/descriptor_budget.hpp"
#include "net/http_client.hpp"
#include "route/endpoint_health.hpp"
#include "route/upstream_lane.hpp"

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace mcpclass::route {

/// How an endpoint's lanes are made.
struct LaneSettings {
  std::chrono::milliseconds connect_timeout{0};
  std::string ca_file;
  std::size_t keep_alive = 0;
  std::shared_ptr<util::DescriptorBudget> budget;
  bool tls = false;
};

/// One endpoint of a pool.
/// Thread-safety: the counters, next_lane(), lane_on() and stop_context_lanes() from any
/// thread; the rest is immutable.
struct Endpoint {
  std::string name;  ///< unique within its model: the metrics' label
  net::HttpUrl url;  ///< <base_url>/chat/completions, or /messages for api_format anthropic
  std::string responses_target;  ///< <base_url>/responses' target (openai)
  std::string api_key;           ///< resolved: its own, else the model's
  /// Lanes with threads of their own: active health checks, and requests that do not come from
  /// a server I/O thread.
  std::vector<std::unique_ptr<Lane>> lanes;
  LaneSettings lane_settings;
  std::atomic<std::size_t> turn{0};
  std::atomic<std::uint64_t> requests{0};  ///< exchanges started on it
  std::atomic<std::uint64_t> failures{0};  ///< connect failures, 5xx, timeouts, broken answers

  /// Its lanes take turns.
  Lane& next_lane() { return *lanes[turn.fetch_add(1, std::memory_order_relaxed) % lanes.size()]; }
  /// The lane on a server I/O thread's `context`, made on first use: an exchange started there
  /// runs on the client connection's own thread. Handing each request to a lane's thread and its
  /// answer back cost two thread wake-ups per request (bench/results/route-signals.md).
  Lane& lane_on(const std::shared_ptr<boost::asio::io_context>& context);
  /// Stops the engines of the lanes on server contexts (they end their exchanges there).
  void stop_context_lanes();

 private:
  std::mutex context_mutex_;
  bool context_lanes_stopped_ = false;
  std::vector<std::pair<const boost::asio::io_context*, std::unique_ptr<Lane>>> context_lanes_;
};

/// What /metrics shows of an endpoint.
struct EndpointStats {
  std::string name;
  std::uint64_t requests = 0;
  std::uint64_t failures = 0;
  std::uint64_t ejections = 0;
  bool ejected = false;
};

/// Thread-safety: every member from any thread, except the destructor and stop() on one of the
/// endpoints' engine threads.
class BackendPool {
 public:
  /// Resolves the api_keys ("${NAME}") and starts `threads` lanes per endpoint, and the active
  /// health checks when the model has a health_check_path. Throws what parse_http_url,
  /// prepare_tls and resolve_env_reference throw (the caller names the key).
  BackendPool(const config::RouteUpstream& settings, const std::string& path, std::size_t threads,
              std::size_t keep_alive, const std::shared_ptr<util::DescriptorBudget>& budget);
  ~BackendPool();
  BackendPool(const BackendPool&) = delete;
  BackendPool& operator=(const BackendPool&) = delete;

  /// The endpoint a request goes to next, by weight among those in rotation at `now` and not in
  /// `tried` (the ones this request already failed to reach); null when there is none. Counts
  /// the request on the endpoint.
  Endpoint* pick(const std::vector<const Endpoint*>& tried,
                 HealthClock::time_point now = HealthClock::now());
  /// Whether a request that could not reach `tried` endpoints of this pool may try another
  /// (reliability.retry_count; by default every endpoint once).
  bool may_retry(std::size_t tried) const;
  /// A request on `e` ended with a complete answer below 500.
  void succeeded(Endpoint& e);
  /// A request on `e` failed (connect failure, 5xx, timeout, broken answer): it may be ejected.
  void failed(Endpoint& e, HealthClock::time_point now = HealthClock::now());

  /// Whether `e` is one of this pool's endpoints.
  bool contains(const Endpoint& e) const;

  std::vector<EndpointStats> stats(HealthClock::time_point now = HealthClock::now()) const;
  /// Cancels the exchanges and checks still running and joins the lanes' threads. Idempotent.
  void stop();

 private:
  void schedule_check(std::size_t index);
  std::size_t index_of(const Endpoint& e) const;

  const config::EndpointReliability policy_;
  std::vector<std::unique_ptr<Endpoint>> endpoints_;
  mutable std::mutex mutex_;
  WeightedPicker picker_;
  std::vector<EndpointHealth> health_;
};

}  // namespace mcpclass::route
