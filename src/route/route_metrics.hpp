// Internal: what the routing proxy counts for GET /metrics (docs/route.md, "Metrics"). Labels
// are configured models and category names only, so the series are bounded by the config.
// Thread-safety: every member may be called from any thread.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>

namespace mcpclass::route {

struct RouteEvaluation;

class RouteMetrics {
 public:
  /// A routed request's evaluation: its time (the decision histogram), its decision, the
  /// signals it computed (latency, matches), a block or redactions.
  void evaluated(const RouteEvaluation& e, double seconds);
  void routed(std::string_view category, std::string_view model);
  void upstream(std::string_view model, double seconds);
  void first_byte(std::string_view model, double seconds);
  void upstream_error(std::string_view model, std::string_view reason);
  /// A request answered 503 before any upstream was tried (`reason`: "descriptors").
  void refused(std::string_view reason);
  /// A request forwarded unclassified by route.admission's fail-open (`reason`: rejected,
  /// expired, failed).
  void failed_open(std::string_view reason);
  std::string prometheus() const;

 private:
  struct Histogram {
    std::array<std::uint64_t, 16> buckets{};
    std::uint64_t count = 0;
    double sum = 0;
  };
  static void observe(Histogram& h, const double* bounds, double seconds);

  mutable std::mutex mutex_;
  std::map<std::pair<std::string, std::string>, std::uint64_t> requests_;
  std::map<std::pair<std::string, std::string>, std::uint64_t> errors_;
  std::map<std::string, std::uint64_t, std::less<>> refused_;
  std::map<std::string, std::uint64_t, std::less<>> failed_open_;
  Histogram decision_;
  std::map<std::string, std::uint64_t, std::less<>> decisions_;
  std::map<std::pair<std::string, std::string>, Histogram> signal_seconds_;
  std::map<std::pair<std::string, std::string>, std::uint64_t> signal_matches_;
  std::map<std::string, std::uint64_t, std::less<>> blocked_;
  std::map<std::string, std::uint64_t, std::less<>> redacted_;
  std::map<std::string, std::uint64_t, std::less<>> turns_;
  std::map<std::string, Histogram, std::less<>> upstream_;
  std::map<std::string, Histogram, std::less<>> first_byte_;
};

}  // namespace mcpclass::route
