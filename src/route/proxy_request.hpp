// Internal: one request on its way through the routing proxy (proxy_stages.hpp runs it): the
// configuration it is routed with (`Generation`) and the state its stages share (`Forward`).
// Thread-safety: a Generation is immutable once built; a Forward's stages run one after another
// (see Forward for the upstream's callbacks and cancellation).
#pragma once

#include "mcpclass/route/router.hpp"
#include "mcpclass/transport/server/http_app.hpp"
#include "mcpclass/util/admission_gate.hpp"
#include "mcpclass/util/span_record.hpp"
#include "mcpclass/util/trace_context.hpp"
#include "net/http_client.hpp"
#include "route/backend_pool.hpp"
#include "route/request_api.hpp"
#include "route/route_table.hpp"
#include "route/semantic_cache.hpp"

#include <boost/asio/io_context.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace mcpclass::route {

// What one request is routed with: the router and the upstreams of one configuration.
struct Generation {
  std::shared_ptr<const Router> router;
  std::shared_ptr<const RouteTable> table;
  std::shared_ptr<SemanticCache> cache;       // null: route.semantic_cache is off
  std::shared_ptr<util::AdmissionGate> gate;  // null: route.admission is off or rules decide
};

// One client request on its way through its upstream and fallbacks. Callbacks run on the
// upstream engine's thread (the client connection's own I/O thread when the server gave its
// context, else a lane's), cancellation on the client connection's strand: `mutex` orders them.
struct Forward {
  // The request's span ends when its last reference goes: after its answer, on every path.
  ~Forward() {
    if (!spans) return;
    std::vector<std::pair<std::string, std::string>> attributes{{"url.path", path}};
    if (!evaluation.model.empty()) attributes.emplace_back("mcpclass.model", evaluation.model);
    if (!evaluation.decision.empty())
      attributes.emplace_back("mcpclass.decision", evaluation.decision);
    spans->record(util::SpanRecord::ending_now(span, "route " + path,
                                               util::SpanRecord::Kind::server, received_unix_nano,
                                               std::move(attributes)));
  }

  std::shared_ptr<transport::server::HttpAppResponse> response;
  std::shared_ptr<const Generation> generation;
  std::chrono::steady_clock::time_point received = std::chrono::steady_clock::now();
  std::uint64_t received_unix_nano = util::SpanRecord::now_unix_nano();
  util::SpanContext span;                 // this request's, under the caller's traceparent
  std::shared_ptr<util::SpanSink> spans;  // null: spans are not recorded
  std::string path;
  bool routed = false;
  // Forwarded unclassified by route.admission's fail-open: the cache is neither asked nor
  // given its answer (proxy_cache.cpp says why).
  bool failed_open = false;
  RouteEvaluation evaluation;  // routed: the decision and the request to forward
  std::string raw;             // passed through: the body as received
  RequestApi api = RequestApi::chat_completions;
  std::string accept;
  transport::server::HttpHeaders
      client_headers;  // anthropic-version and anthropic-beta, for the upstream
  // The client connection's I/O context: the upstream exchange runs there (null: a lane's own
  // thread).
  std::shared_ptr<boost::asio::io_context> context;
  transport::server::HttpHeaders decision_headers;  // x-vsr-*, x-mcpclass-*
  std::optional<CacheTicket> cache;  // a cacheable miss: its answer is stored when it ends

  std::mutex mutex;
  std::set<std::string> tried;
  Lane* lane = nullptr;                      // holds a descriptor for the exchange running on it
  Endpoint* endpoint = nullptr;              // of the exchange running
  std::vector<const Endpoint*> unreachable;  // endpoints it could not connect to (any model)
  net::HttpError unreached;                  // why the last of them failed, on this model
  net::HttpEngine* engine = nullptr;
  net::HttpEngine::ExchangeId id = 0;
  bool cancelled = false;
  bool sent = false;
  bool first_byte = false;
  std::chrono::steady_clock::time_point sent_at;
  // The upstream's status and headers (engine thread only). A small non-streaming answer is
  // collected until complete; a streamed one begins with its first body bytes, so an answer
  // that breaks before any (an endless chunk line, say) still gets a 502.
  bool buffered = false;
  bool begun = false;
  unsigned status = 0;
  transport::server::HttpHeaders headers;
  std::string body;
  util::SpanContext upstream_span;  // of the exchange running: the upstream's parent
  std::uint64_t upstream_start = 0;
};

}  // namespace mcpclass::route
