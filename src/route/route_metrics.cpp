#include "route/route_metrics.hpp"

#include "mcpclass/route/router.hpp"
#include "mcpclass/util/prometheus.hpp"

#include <fmt/format.h>

namespace mcpclass::route {

namespace {

// The decision takes microseconds (rules) to milliseconds (learned); upstreams take seconds.
constexpr std::array<double, 16> kDecisionBounds = {
    0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025,
    0.005,   0.01,     0.025,   0.05,   0.1,     0.25,   0.5,   1.0};
constexpr std::array<double, 16> kUpstreamBounds = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                                                    0.05,   0.1,   0.25,   0.5,   1.0,  2.5,
                                                    5.0,    10.0,  30.0,   60.0};

std::string label(std::string_view value) {
  return util::prometheus_label(value);
}

}  // namespace

void RouteMetrics::observe(Histogram& h, const double* bounds, double seconds) {
  for (std::size_t i = 0; i < h.buckets.size(); ++i)
    if (seconds <= bounds[i]) ++h.buckets[i];
  ++h.count;
  h.sum += seconds;
}

void RouteMetrics::routed(std::string_view category, std::string_view model) {
  std::lock_guard lock(mutex_);
  ++requests_[{std::string(category), std::string(model)}];
}

void RouteMetrics::evaluated(const RouteEvaluation& e, double seconds) {
  std::lock_guard lock(mutex_);
  observe(decision_, kDecisionBounds.data(), seconds);
  ++decisions_[e.decision.empty() ? std::string("none") : e.decision];
  for (const auto& s : e.signals) {
    observe(signal_seconds_[{s.type, s.name}], kDecisionBounds.data(), s.seconds);
    auto& matches = signal_matches_[{s.type, s.name}];
    if (s.matched) ++matches;
  }
  if (e.action == RouteEvaluation::Action::block) ++blocked_[e.block_reason];
  if (e.redactions > 0) redacted_["pii"] += e.redactions;
  if (!e.conversation.empty()) ++turns_[e.conversation];
}

void RouteMetrics::upstream(std::string_view model, double seconds) {
  std::lock_guard lock(mutex_);
  auto it = upstream_.find(model);
  if (it == upstream_.end()) it = upstream_.emplace(std::string(model), Histogram{}).first;
  observe(it->second, kUpstreamBounds.data(), seconds);
}

void RouteMetrics::first_byte(std::string_view model, double seconds) {
  std::lock_guard lock(mutex_);
  auto it = first_byte_.find(model);
  if (it == first_byte_.end()) it = first_byte_.emplace(std::string(model), Histogram{}).first;
  observe(it->second, kUpstreamBounds.data(), seconds);
}

void RouteMetrics::upstream_error(std::string_view model, std::string_view reason) {
  std::lock_guard lock(mutex_);
  ++errors_[{std::string(model), std::string(reason)}];
}

void RouteMetrics::refused(std::string_view reason) {
  std::lock_guard lock(mutex_);
  ++refused_[std::string(reason)];
}

void RouteMetrics::failed_open(std::string_view reason) {
  std::lock_guard lock(mutex_);
  ++failed_open_[std::string(reason)];
}

std::string RouteMetrics::prometheus() const {
  auto histogram = [](std::string& out, std::string_view name, std::string_view labels,
                      const Histogram& h, const std::array<double, 16>& bounds) {
    const std::string sep = labels.empty() ? "" : ",";
    for (std::size_t i = 0; i < bounds.size(); ++i)
      out += fmt::format("{}_bucket{{{}{}le=\"{}\"}} {}\n", name, labels, sep, bounds[i],
                         h.buckets[i]);
    out += fmt::format("{}_bucket{{{}{}le=\"+Inf\"}} {}\n", name, labels, sep, h.count);
    const std::string braces = labels.empty() ? "" : fmt::format("{{{}}}", labels);
    out += fmt::format("{}_sum{} {}\n{}_count{} {}\n", name, braces, h.sum, name, braces, h.count);
  };
  std::lock_guard lock(mutex_);
  std::string out =
      "# HELP mcpclass_route_requests_total Requests routed (or passed through) by category and "
      "model.\n# TYPE mcpclass_route_requests_total counter\n";
  for (const auto& [key, n] : requests_)
    out += fmt::format("mcpclass_route_requests_total{{category=\"{}\",model=\"{}\"}} {}\n",
                       label(key.first), label(key.second), n);
  out +=
      "# HELP mcpclass_route_decision_seconds Text extraction, signals, decision and rewrite.\n"
      "# TYPE mcpclass_route_decision_seconds histogram\n";
  histogram(out, "mcpclass_route_decision_seconds", "", decision_, kDecisionBounds);
  out +=
      "# HELP mcpclass_route_decisions_total Routed requests by the decision that matched "
      "(none: the classifier's category chose).\n# TYPE mcpclass_route_decisions_total counter\n";
  for (const auto& [name, n] : decisions_)
    out += fmt::format("mcpclass_route_decisions_total{{decision=\"{}\"}} {}\n", label(name), n);
  out +=
      "# HELP mcpclass_route_signal_seconds Time to compute a signal (only signals an evaluated "
      "condition or guard read are computed).\n# TYPE mcpclass_route_signal_seconds histogram\n";
  for (const auto& [key, h] : signal_seconds_)
    histogram(out, "mcpclass_route_signal_seconds",
              fmt::format("type=\"{}\",signal=\"{}\"", label(key.first), label(key.second)), h,
              kDecisionBounds);
  out +=
      "# HELP mcpclass_route_signal_matches_total Computed signals that matched.\n"
      "# TYPE mcpclass_route_signal_matches_total counter\n";
  for (const auto& [key, n] : signal_matches_)
    out += fmt::format("mcpclass_route_signal_matches_total{{type=\"{}\",signal=\"{}\"}} {}\n",
                       label(key.first), label(key.second), n);
  out +=
      "# HELP mcpclass_route_blocked_total Requests a decision's guard refused, by reason.\n"
      "# TYPE mcpclass_route_blocked_total counter\n";
  for (const auto& [reason, n] : blocked_)
    out += fmt::format("mcpclass_route_blocked_total{{reason=\"{}\"}} {}\n", label(reason), n);
  out +=
      "# HELP mcpclass_route_redactions_total Message texts rewritten to remove personal data.\n"
      "# TYPE mcpclass_route_redactions_total counter\n";
  for (const auto& [reason, n] : redacted_)
    out += fmt::format("mcpclass_route_redactions_total{{reason=\"{}\"}} {}\n", label(reason), n);
  out +=
      "# HELP mcpclass_route_conversation_turns_total Later turns of kept conversations: same "
      "(chose the kept decision again), kept (would have moved, not by the margin), moved.\n"
      "# TYPE mcpclass_route_conversation_turns_total counter\n";
  for (const auto& [outcome, n] : turns_)
    out += fmt::format("mcpclass_route_conversation_turns_total{{outcome=\"{}\"}} {}\n",
                       label(outcome), n);
  out +=
      "# HELP mcpclass_route_upstream_seconds Request sent to the upstream's response head.\n"
      "# TYPE mcpclass_route_upstream_seconds histogram\n";
  for (const auto& [model, h] : upstream_)
    histogram(out, "mcpclass_route_upstream_seconds", fmt::format("model=\"{}\"", label(model)), h,
              kUpstreamBounds);
  out +=
      "# HELP mcpclass_route_first_byte_seconds Request received to the first body byte sent.\n"
      "# TYPE mcpclass_route_first_byte_seconds histogram\n";
  for (const auto& [model, h] : first_byte_)
    histogram(out, "mcpclass_route_first_byte_seconds", fmt::format("model=\"{}\"", label(model)),
              h, kUpstreamBounds);
  out +=
      "# HELP mcpclass_route_upstream_errors_total Upstream failures by model and reason.\n"
      "# TYPE mcpclass_route_upstream_errors_total counter\n";
  for (const auto& [key, n] : errors_)
    out += fmt::format("mcpclass_route_upstream_errors_total{{model=\"{}\",reason=\"{}\"}} {}\n",
                       label(key.first), label(key.second), n);
  out +=
      "# HELP mcpclass_route_refused_total Requests answered 503 before any upstream was tried.\n"
      "# TYPE mcpclass_route_refused_total counter\n";
  for (const auto& [reason, n] : refused_)
    out += fmt::format("mcpclass_route_refused_total{{reason=\"{}\"}} {}\n", label(reason), n);
  out +=
      "# HELP mcpclass_route_fail_open_total Requests forwarded unclassified to route.admission's "
      "model because their classification was rejected, expired or failed.\n"
      "# TYPE mcpclass_route_fail_open_total counter\n";
  for (const auto& [reason, n] : failed_open_)
    out += fmt::format("mcpclass_route_fail_open_total{{reason=\"{}\"}} {}\n", label(reason), n);
  return out;
}

}  // namespace mcpclass::route
