#include "route/endpoint_health.hpp"

#include <algorithm>
#include <utility>

namespace mcpclass::route {

bool EndpointHealth::failed(HealthClock::time_point now) {
  if (!available(now) || policy_.consecutive_failures == 0) return false;
  ++consecutive_;
  return consecutive_ >= policy_.consecutive_failures;
}

void EndpointHealth::eject(HealthClock::time_point now) {
  // A long healthy spell forgives earlier ejections (Envoy decrements its multiplier instead).
  if (ejections_ > 0 && now - ejected_until_ >= policy_.max_ejection_time) multiplier_ = 0;
  ++multiplier_;
  ++ejections_;
  consecutive_ = 0;
  const auto time = std::min<HealthClock::duration>(policy_.base_ejection_time * multiplier_,
                                                    policy_.max_ejection_time);
  ejected_until_ = now + time;
}

WeightedPicker::WeightedPicker(std::vector<std::uint32_t> weights)
    : weights_(std::move(weights)), current_(weights_.size(), 0) {}

}  // namespace mcpclass::route
