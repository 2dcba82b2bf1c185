#include "route/route_table.hpp"

#include "mcpclass/classify/errors.hpp"
#include "route/request_api.hpp"
#include "util/env_reference.hpp"

#include <algorithm>
#include <utility>

namespace mcpclass::route {

Lane::Lane(std::unique_ptr<net::HttpEngine> engine, std::size_t keep_alive,
           std::shared_ptr<util::DescriptorBudget> budget)
    : engine_(std::move(engine)), keep_alive_(keep_alive), budget_(std::move(budget)) {}

Lane::~Lane() {
  engine_->stop();
  if (budget_ && kept_ > 0) budget_->release(kept_);
}

bool Lane::take() {
  std::lock_guard lock(mutex_);
  if (kept_ > 0) {
    --kept_;
    return true;
  }
  return !budget_ || budget_->try_acquire();
}

void Lane::give_back(bool clean) {
  std::lock_guard lock(mutex_);
  // The engine keeps a cleanly ended exchange's connection while its pool has room.
  if (clean && kept_ < keep_alive_) {
    ++kept_;
  } else if (budget_) {
    budget_->release();
  }
}

RouteTable::RouteTable(config::RouteSettings settings,
                       std::shared_ptr<util::DescriptorBudget> budget)
    : settings_(std::move(settings)) {
  for (const auto& [name, s] : settings_.models) {
    const std::string path = "route.models." + name;
    Upstream u;
    u.name = name;
    u.settings = s;
    u.api_key = util::resolve_env_reference(s.api_key, path + ".api_key");
    try {
      const bool anthropic = s.api_format == config::ApiFormat::anthropic;
      u.url = net::parse_http_url(
          s.base_url + std::string(upstream_path(anthropic ? RequestApi::messages
                                                           : RequestApi::chat_completions)));
      u.responses_target =
          net::parse_http_url(s.base_url + std::string(upstream_path(RequestApi::responses)))
              .target;
      for (std::size_t i = 0; i < std::max<std::size_t>(1, settings_.upstream_threads); ++i) {
        auto engine = std::make_unique<net::HttpEngine>(s.connect_timeout, s.ca_file, SIZE_MAX,
                                                        settings_.keep_alive_connections);
        if (u.url.tls) engine->prepare_tls();
        u.lanes.push_back(
            std::make_unique<Lane>(std::move(engine), settings_.keep_alive_connections, budget));
      }
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

Lane& RouteTable::next_lane(const Upstream& upstream) const {
  return *upstream.lanes[turn_.fetch_add(1, std::memory_order_relaxed) % upstream.lanes.size()];
}

void RouteTable::stop() const {
  for (const auto& [name, u] : upstreams_)
    for (const auto& lane : u.lanes) lane->engine().stop();
}

}  // namespace mcpclass::route
