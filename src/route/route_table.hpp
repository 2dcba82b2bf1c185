// Internal: one generation of the routing proxy's upstreams, built from a `route` section: per
// model its pool of endpoints (backend_pool.hpp), each with its URL, resolved api_key and I/O
// threads (lanes), each lane an HttpEngine with its own keep-alive pool whose sockets draw on the
// process's descriptor budget.
#pragma once

#include "mcpclass/config/route_settings.hpp"
#include "mcpclass/util/descriptor_budget.hpp"
#include "route/backend_pool.hpp"

#include <map>
#include <memory>
#include <string>
#include <string_view>

namespace mcpclass::route {

struct Upstream {
  std::string name;
  config::RouteUpstream settings;
  std::unique_ptr<BackendPool> pool;  // its endpoints, each with its lanes
};

/// Immutable once built (the lanes inside are thread-safe): a request holds the table it was
/// routed with until it ends, so a reload never pulls an upstream from under it.
/// Thread-safety: const members from any thread; the destructor stops the engines, so it must not
/// run on one of their threads.
class RouteTable {
 public:
  /// Resolves each api_key "${NAME}" and starts each model's pool. Throws ConfigError naming
  /// `route.models.<name>` (an unset variable, an unusable ca_file).
  RouteTable(config::RouteSettings settings, std::shared_ptr<util::DescriptorBudget> budget);

  const config::RouteSettings& settings() const noexcept { return settings_; }
  /// The model's upstream, or null.
  const Upstream* find(std::string_view model) const;
  /// Whether requests naming `model` are classified ("auto" and the other routed_models).
  bool routed(std::string_view model) const;
  /// Every endpoint's requests, failures, ejections and state, for /metrics.
  std::string prometheus() const;
  /// Cancels the exchanges still running and joins the lanes' threads. Idempotent.
  void stop() const;

 private:
  config::RouteSettings settings_;
  std::map<std::string, Upstream, std::less<>> upstreams_;
};

}  // namespace mcpclass::route
