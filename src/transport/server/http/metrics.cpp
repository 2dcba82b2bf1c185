// Prometheus text exposition of the transport counters.
#include "transport/server/http/metrics.hpp"

#include "mcpclass/util/prometheus.hpp"

#include "mcpclass/server/session.hpp"

#include <fmt/format.h>

#include <functional>
#include <thread>

namespace mcpclass::transport::server {

namespace {

// Label values come from our own routes and from method names a client sent: escaped.
using util::prometheus_label;
constexpr auto label = [](std::string_view v) { return prometheus_label(v); };

}  // namespace

HttpMetrics::Shard& HttpMetrics::shard() {
  return shards_[std::hash<std::thread::id>{}(std::this_thread::get_id()) % kShards];
}

void HttpMetrics::record_http(std::string_view route, unsigned status, double seconds) {
  Shard& s = shard();
  std::lock_guard lock(s.mutex);
  ++s.http[{std::string(route), status}];
  for (std::size_t i = 0; i < kBuckets.size(); ++i) {
    if (seconds <= kBuckets[i]) ++s.bucket_counts[i];
  }
  ++s.duration_count;
  s.duration_sum += seconds;
}

std::string_view HttpMetrics::method_label(std::string_view method) noexcept {
  return mcpclass::server::Session::answers(method) ? method : "other";
}

void HttpMetrics::record_rpc(std::string_view method, bool error) {
  const std::string key(method_label(method));
  Shard& s = shard();
  std::lock_guard lock(s.mutex);
  auto& [calls, errors] = s.rpc[key];
  ++calls;
  if (error) ++errors;
}

std::string HttpMetrics::render(const Gauges& gauges) const {
  Shard total;
  for (const Shard& s : shards_) {
    std::lock_guard lock(s.mutex);
    for (const auto& [key, n] : s.http) total.http[key] += n;
    for (const auto& [method, counts] : s.rpc) {
      total.rpc[method].first += counts.first;
      total.rpc[method].second += counts.second;
    }
    for (std::size_t i = 0; i < kBuckets.size(); ++i) total.bucket_counts[i] += s.bucket_counts[i];
    total.duration_count += s.duration_count;
    total.duration_sum += s.duration_sum;
  }
  std::string out;
  out += "# HELP mcpclass_http_requests_total HTTP requests served, by route and status.\n";
  out += "# TYPE mcpclass_http_requests_total counter\n";
  for (const auto& [key, n] : total.http) {
    out += fmt::format("mcpclass_http_requests_total{{route=\"{}\",code=\"{}\"}} {}\n",
                       label(key.first), key.second, n);
  }
  out += "# HELP mcpclass_rpc_requests_total JSON-RPC requests, by method.\n";
  out += "# TYPE mcpclass_rpc_requests_total counter\n";
  for (const auto& [method, counts] : total.rpc) {
    out += fmt::format("mcpclass_rpc_requests_total{{method=\"{}\"}} {}\n", label(method),
                       counts.first);
  }
  out += "# HELP mcpclass_rpc_errors_total JSON-RPC requests answered with an error.\n";
  out += "# TYPE mcpclass_rpc_errors_total counter\n";
  for (const auto& [method, counts] : total.rpc) {
    out += fmt::format("mcpclass_rpc_errors_total{{method=\"{}\"}} {}\n", label(method),
                       counts.second);
  }
  out += "# HELP mcpclass_http_request_duration_seconds Time from request read to response.\n";
  out += "# TYPE mcpclass_http_request_duration_seconds histogram\n";
  for (std::size_t i = 0; i < kBuckets.size(); ++i) {
    out += fmt::format("mcpclass_http_request_duration_seconds_bucket{{le=\"{}\"}} {}\n",
                       kBuckets[i], total.bucket_counts[i]);
  }
  out += fmt::format("mcpclass_http_request_duration_seconds_bucket{{le=\"+Inf\"}} {}\n",
                     total.duration_count);
  out += fmt::format("mcpclass_http_request_duration_seconds_sum {}\n", total.duration_sum);
  out += fmt::format("mcpclass_http_request_duration_seconds_count {}\n", total.duration_count);
  out += "# HELP mcpclass_http_connections Open HTTP connections.\n";
  out += "# TYPE mcpclass_http_connections gauge\n";
  out += fmt::format("mcpclass_http_connections {}\n", gauges.connections);
  out += "# HELP mcpclass_active_sessions MCP sessions alive.\n";
  out += "# TYPE mcpclass_active_sessions gauge\n";
  out += fmt::format("mcpclass_active_sessions {}\n", gauges.sessions);
  out += "# HELP mcpclass_sse_streams Open GET SSE streams.\n";
  out += "# TYPE mcpclass_sse_streams gauge\n";
  out += fmt::format("mcpclass_sse_streams {}\n", gauges.streams);
  out += "# HELP mcpclass_sse_replay_bytes Bytes kept for Last-Event-ID replay.\n";
  out += "# TYPE mcpclass_sse_replay_bytes gauge\n";
  out += fmt::format("mcpclass_sse_replay_bytes {}\n", gauges.replay_bytes);
  return out;
}

}  // namespace mcpclass::transport::server
