#include "route/route_table.hpp"

#include "mcpclass/classify/errors.hpp"
#include "mcpclass/util/prometheus.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

namespace mcpclass::route {

RouteTable::RouteTable(config::RouteSettings settings,
                       std::shared_ptr<util::DescriptorBudget> budget)
    : settings_(std::move(settings)) {
  for (const auto& [name, s] : settings_.models) {
    const std::string path = "route.models." + name;
    Upstream u;
    u.name = name;
    u.settings = s;
    try {
      u.pool = std::make_unique<BackendPool>(s, path, settings_.upstream_threads,
                                             settings_.keep_alive_connections, budget);
    } catch (const classify::ConfigError&) {
      throw;
    } catch (const std::exception& e) {
      throw classify::ConfigError(path, e.what());
    }
    upstreams_.emplace(name, std::move(u));
  }
}

const Upstream* RouteTable::find(std::string_view model) const {
  const auto it = upstreams_.find(model);
  return it == upstreams_.end() ? nullptr : &it->second;
}

bool RouteTable::routed(std::string_view model) const {
  return std::find(settings_.routed_models.begin(), settings_.routed_models.end(), model) !=
         settings_.routed_models.end();
}

std::string RouteTable::prometheus() const {
  std::vector<std::pair<std::string, std::vector<EndpointStats>>> all;
  for (const auto& [name, u] : upstreams_) all.emplace_back(name, u.pool->stats());
  std::string out;
  auto family = [&](std::string_view metric, std::string_view type, std::string_view help,
                    auto value) {
    out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", metric, help, metric, type);
    for (const auto& [model, endpoints] : all)
      for (const auto& e : endpoints)
        out += fmt::format("{}{{model=\"{}\",endpoint=\"{}\"}} {}\n", metric,
                           util::prometheus_label(model), util::prometheus_label(e.name), value(e));
  };
  family("mcpclass_route_endpoint_requests_total", "counter",
         "Requests sent to each endpoint of a model's pool.",
         [](const EndpointStats& e) { return e.requests; });
  family("mcpclass_route_endpoint_failures_total", "counter",
         "Connect failures, 5xx answers, timeouts, broken answers and failed health checks.",
         [](const EndpointStats& e) { return e.failures; });
  family("mcpclass_route_endpoint_ejections_total", "counter",
         "Times an endpoint was taken out of rotation.",
         [](const EndpointStats& e) { return e.ejections; });
  family("mcpclass_route_endpoint_ejected", "gauge", "1 while the endpoint is out of rotation.",
         [](const EndpointStats& e) { return e.ejected ? 1 : 0; });
  return out;
}

void RouteTable::stop() const {
  for (const auto& [name, u] : upstreams_) u.pool->stop();
}

}  // namespace mcpclass::route
