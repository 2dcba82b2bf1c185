// Internal: one generation of the routing proxy's upstreams, built from a `route` section: per
// model its URL, resolved api_key and I/O threads (lanes), each lane an HttpEngine with its own
// keep-alive pool whose sockets draw on the process's descriptor budget.
#pragma once

#include "mcpclass/config/route_settings.hpp"
#include "mcpclass/util/descriptor_budget.hpp"
#include "net/http_client.hpp"

#include <atomic>
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace mcpclass::route {

/// An upstream I/O thread and the descriptors its sockets hold: one per exchange, plus one per
/// connection its pool may be keeping (counted from the exchanges that ended cleanly, so the
/// count is never below what the pool holds).
/// Thread-safety: take() and give_back() may be called from any thread.
class Lane {
 public:
  /// `budget` null: nothing is counted.
  Lane(std::unique_ptr<net::HttpEngine> engine, std::size_t keep_alive,
       std::shared_ptr<util::DescriptorBudget> budget);
  /// Stops the engine (never call it on the engine's thread) and returns its descriptors.
  ~Lane();
  Lane(const Lane&) = delete;
  Lane& operator=(const Lane&) = delete;

  net::HttpEngine& engine() { return *engine_; }
  /// A descriptor for one exchange: a kept connection's, else a new one from the budget. False
  /// (nothing taken) when the budget is spent.
  bool take();
  /// The exchange that take() was for ended; `clean`: its connection may have been kept.
  void give_back(bool clean);

 private:
  std::unique_ptr<net::HttpEngine> engine_;
  const std::size_t keep_alive_;
  const std::shared_ptr<util::DescriptorBudget> budget_;
  std::mutex mutex_;
  std::size_t kept_ = 0;
};

struct Upstream {
  std::string name;
  config::RouteUpstream settings;
  net::HttpUrl url;  // <base_url>/chat/completions, or /messages for api_format anthropic
  std::string responses_target;  // <base_url>/responses' target (openai)
  std::string api_key;           // "${NAME}" resolved
  std::vector<std::unique_ptr<Lane>> lanes;
};

/// Immutable once built (the lanes inside are thread-safe): a request holds the table it was
/// routed with until it ends, so a reload never pulls an upstream from under it.
/// Thread-safety: const members from any thread; the destructor stops the engines, so it must not
/// run on one of their threads.
class RouteTable {
 public:
  /// Resolves each api_key "${NAME}" and starts each model's lanes. Throws ConfigError naming
  /// `route.models.<name>` (an unset variable, an unusable ca_file).
  RouteTable(config::RouteSettings settings, std::shared_ptr<util::DescriptorBudget> budget);

  const config::RouteSettings& settings() const noexcept { return settings_; }
  /// The model's upstream, or null.
  const Upstream* find(std::string_view model) const;
  /// Whether requests naming `model` are classified ("auto" and the other routed_models).
  bool routed(std::string_view model) const;
  /// The model's lanes take turns.
  Lane& next_lane(const Upstream& upstream) const;
  /// Cancels the exchanges still running and joins the lanes' threads. Idempotent.
  void stop() const;

 private:
  config::RouteSettings settings_;
  std::map<std::string, Upstream, std::less<>> upstreams_;
  mutable std::atomic<std::size_t> turn_{0};
};

}  // namespace mcpclass::route
