// Internal: the routing proxy's state (RouteProxy::Impl) and the stages of a request, each in a
// file of its own, in the order a request meets them:
//   route_proxy.cpp     the request's lifetime: its checks, its Forward, the stages in order
//                       (dispatch); reloads, metrics, stop
//   proxy_evaluate.cpp  admission, the classification (on the workers when it waits), and a
//                       refused or failed one: fail-open or fail-closed
//   proxy_guard.cpp     the evaluation's own answers (reject, block, an explanation) and the
//                       passthrough guard's request
//   proxy_cache.cpp     the semantic cache: a hit answered, a clean answer stored
//   proxy_forward.cpp   the upstream: its start, retries and fallbacks, the answer streamed
//                       back, cancellation
// Thread-safety: as RouteProxy; a request's state is its Forward's (proxy_request.hpp).
#pragma once

#include "mcpclass/route/route_proxy.hpp"
#include "mcpclass/util/admission_gate.hpp"
#include "mcpclass/util/executor.hpp"
#include "route/conversation_store.hpp"
#include "route/proxy_request.hpp"
#include "route/redis_link.hpp"
#include "route/route_metrics.hpp"

#include <boost/json.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mcpclass::route {

inline constexpr const char* kJson = "application/json";

// An error in the shape of the API the client called (OpenAI's or Anthropic's).
void error_response(RequestApi api, transport::server::HttpAppResponse& response, unsigned status,
                    std::string_view message, std::string_view type, std::string_view code,
                    transport::server::HttpHeaders headers = {}, std::string_view param = {});
void respond_json(transport::server::HttpAppResponse& response, unsigned status,
                  transport::server::HttpHeaders headers, std::string body);

// The admission gate of `router`'s configuration (proxy_evaluate.cpp).
std::shared_ptr<util::AdmissionGate> gate_for(const Router& router,
                                              const std::shared_ptr<util::AdmissionGate>& previous);
// The semantic cache of `router`'s configuration (proxy_cache.cpp).
std::shared_ptr<SemanticCache> cache_for(const Router& router,
                                         const std::shared_ptr<SemanticCache>& previous,
                                         const RedisLink::Log& log);

struct RouteProxy::Impl : std::enable_shared_from_this<Impl> {
  using Clock = std::chrono::steady_clock;

  explicit Impl(RouteProxyOptions o) : options(std::move(o)), pool(options.worker_threads) {}

  RouteProxyOptions options;
  std::atomic<std::shared_ptr<const Generation>> current;
  RouteMetrics metrics;
  std::atomic<std::uint64_t> cache_answers{0};  // ids of answers from the cache
  ConversationStore conversations;  // outlives reloads: a conversation keeps its decision
  util::ThreadPool pool;
  std::mutex live_mutex;
  std::set<std::shared_ptr<Forward>> live;
  bool stopped = false;
  // Tables a reload replaced, until no request holds them: destroying one stops its engines,
  // which must not happen on an engine's thread (where a request's last reference may go).
  std::mutex retired_mutex;
  std::vector<std::shared_ptr<const RouteTable>> retired;
  std::atomic<bool> any_retired{false};  // spares every request the mutex

  // route_proxy.cpp: the proxy's lifetime and a request's.
  void retire(std::shared_ptr<const RouteTable> table);
  void reap();
  RedisLink::Log redis_log() const;
  void log(const Forward& fwd, std::string_view message) const;
  void record(const Forward& fwd, util::SpanContext context, std::string name,
              util::SpanRecord::Kind kind, std::uint64_t start,
              std::vector<std::pair<std::string, std::string>> attributes,
              std::string_view error = {}) const;
  void models(transport::server::HttpAppResponse& response) const;
  void chat(transport::server::HttpAppRequest& request,
            const std::shared_ptr<transport::server::HttpAppResponse>& response, bool explain,
            RequestApi api);
  void dispatch(const std::shared_ptr<Forward>& fwd, bool explain, Clock::time_point t0);

  // proxy_evaluate.cpp
  void evaluate(const std::shared_ptr<Forward>& fwd, boost::json::object request, bool explain,
                std::string conversation, std::string_view request_timeout);
  void overloaded(const std::shared_ptr<Forward>& fwd, boost::json::object request, bool explain,
                  util::AdmissionRefusal why, std::string_view failure = {});
  void decide(const std::shared_ptr<Forward>& fwd, boost::json::object request, bool explain,
              const std::string& conversation, util::AdmissionGate::Ticket* ticket);

  // proxy_guard.cpp
  bool answered_by_guard(Forward& fwd, bool explain, Clock::time_point t0);

  // proxy_cache.cpp
  bool answered_from_cache(Forward& fwd);
  static void store_answer(Forward& fwd, const std::string& name);

  // proxy_forward.cpp
  void watch_cancel(const std::shared_ptr<Forward>& fwd);
  static void cancel(Forward& fwd);
  void done(const std::shared_ptr<Forward>& fwd);
  static std::string upstream_body(const Forward& fwd, const Upstream& u);
  void start(const std::shared_ptr<Forward>& fwd, const std::string& name);
  static void mutate_headers(transport::server::HttpHeaders& headers, const RouteEvaluation& e);
  void refuse(const std::shared_ptr<Forward>& fwd, const std::string& name);
  static void begin(Forward& fwd);
  static void health(BackendPool& pool, Endpoint& endpoint, const net::HttpError& error,
                     unsigned status);
  void ended(const std::shared_ptr<Forward>& fwd, const std::string& name,
             const net::HttpError& error);
  void fail_over(const std::shared_ptr<Forward>& fwd, const std::string& name, bool sent,
                 const net::HttpError& error);
};

}  // namespace mcpclass::route
