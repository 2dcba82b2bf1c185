// Internal: the passive health of one endpoint of a model's pool, as Envoy's outlier detection
// keeps it: failures in a row eject the endpoint for a time that grows with its ejections.
// Whether an ejection is allowed (the pool's max_ejection_percent) is the pool's call. The clock
// is the caller's, so the state machine is tested without sleeping.
// Thread-safety: none; BackendPool calls it under its lock.
#pragma once

#include "mcpclass/config/route_settings.hpp"

#include <chrono>
#include <cstdint>

namespace mcpclass::route {

using HealthClock = std::chrono::steady_clock;

class EndpointHealth {
 public:
  explicit EndpointHealth(const config::EndpointReliability& policy) : policy_(policy) {}

  /// Whether requests may go to it at `now`: never ejected, or its time is up.
  bool available(HealthClock::time_point now) const { return now >= ejected_until_; }
  /// A request ended well (a complete answer below 500, a passing health check).
  void succeeded() { consecutive_ = 0; }
  /// Whether this failure reaches consecutive_failures (the pool then decides on ejecting).
  /// Failures while ejected (requests that started before) are not counted.
  bool failed(HealthClock::time_point now);
  /// Takes it out of rotation from `now` for base_ejection_time × its ejections so far, at most
  /// max_ejection_time; the count starts again once it stayed in rotation for max_ejection_time.
  void eject(HealthClock::time_point now);

  std::uint32_t consecutive_failures() const { return consecutive_; }
  std::uint64_t ejections() const { return ejections_; }
  HealthClock::time_point ejected_until() const { return ejected_until_; }

 private:
  const config::EndpointReliability policy_;
  std::uint32_t consecutive_ = 0;
  std::uint32_t multiplier_ = 0;
  std::uint64_t ejections_ = 0;
  HealthClock::time_point ejected_until_{};
};

/// Smooth weighted round-robin (nginx's): over any run of sum(weights) picks among the same
/// eligible endpoints, each is picked exactly its weight's times, interleaved rather than in
/// bursts. Ineligible endpoints (ejected, already tried) are skipped and the rest share their turn.
/// Thread-safety: none; BackendPool calls it under its lock.
class WeightedPicker {
 public:
  explicit WeightedPicker(std::vector<std::uint32_t> weights);
  static constexpr std::size_t npos = static_cast<std::size_t>(-1);

  /// The next endpoint `eligible(i)` allows, or npos when it allows none.
  template <class Eligible>
  std::size_t pick(Eligible&& eligible) {
    std::size_t best = npos;
    std::int64_t total = 0;
    for (std::size_t i = 0; i < weights_.size(); ++i) {
      if (!eligible(i)) continue;
      current_[i] += weights_[i];
      total += weights_[i];
      if (best == npos || current_[i] > current_[best]) best = i;
    }
    if (best != npos) current_[best] -= total;
    return best;
  }
  std::size_t size() const { return weights_.size(); }

 private:
  std::vector<std::uint32_t> weights_;
  std::vector<std::int64_t> current_;
};

}  // namespace mcpclass::route
