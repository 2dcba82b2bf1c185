// The routing proxy: request validation and the decision on the server's threads (or the
// workers, for classifiers slower than rules), then one Forward per request that carries it to
// its upstream, its fallbacks if the upstream cannot be reached, and streams the answer back.
#include "mcpclass/route/route_proxy.hpp"

#include "mcpclass/jsonrpc/message.hpp"
#include "mcpclass/util/admission_gate.hpp"
#include "mcpclass/util/executor.hpp"
#include "mcpclass/util/trace_context.hpp"
#include "net/http_client.hpp"
#include "route/chat_request.hpp"
#include "route/conversation_store.hpp"
#include "route/request_api.hpp"
#include "route/route_metrics.hpp"
#include "route/route_table.hpp"
#include "route/semantic_cache.hpp"
#include "util/env_reference.hpp"

#include <fmt/format.h>
#include <boost/beast/core/string.hpp>
#include <boost/json.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <utility>
#include <vector>

namespace mcpclass::route {

namespace json = boost::json;
using transport::server::HttpAppRequest;
using transport::server::HttpAppResponse;
using transport::server::HttpHeaders;
using Clock = std::chrono::steady_clock;

namespace {

constexpr std::string_view kModelsPath = "/v1/models";
constexpr std::string_view kExplainPath = "/v1/route/explain";
constexpr const char* kJson = "application/json";

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// Hop-by-hop and framing headers are the proxy's own business on each side.
bool passes_through(std::string_view name) {
  static constexpr std::array<std::string_view, 10> kDropped = {
      "connection", "keep-alive", "transfer-encoding", "content-length", "te",
      "trailer",    "upgrade",    "proxy-connection",  "server",         "date"};
  for (const auto dropped : kDropped)
    if (boost::beast::iequals(name, dropped)) return false;
  return true;
}

// In the shape of the API the client called (OpenAI's or Anthropic's).
void error_response(RequestApi api, HttpAppResponse& response, unsigned status,
                    std::string_view message, std::string_view type, std::string_view code,
                    HttpHeaders headers = {}, std::string_view param = {}) {
  headers.emplace_back("Content-Type", kJson);
  response.respond(status, std::move(headers), api_error(api, status, message, type, code, param));
}

// What one request is routed with: the router and the upstreams of one configuration.
struct Generation {
  std::shared_ptr<const Router> router;
  std::shared_ptr<const RouteTable> table;
  std::shared_ptr<SemanticCache> cache;       // null: route.semantic_cache is off
  std::shared_ptr<util::AdmissionGate> gate;  // null: route.admission is off or rules decide
};

// The admission gate of `router`'s configuration: `previous`'s when its limits are the same (a
// reload keeps its counts and the places taken), else a new one; null when there is none.
std::shared_ptr<util::AdmissionGate> gate_for(
    const Router& router, const std::shared_ptr<util::AdmissionGate>& previous) {
  const auto& limits = router.route_settings().admission.limits;
  // Rules decide on the I/O thread in microseconds: nothing waits, nothing to bound.
  if (limits.max_concurrent == 0 || !router.slow()) return nullptr;
  if (previous && previous->options().max_concurrent == limits.max_concurrent &&
      previous->options().max_queue == limits.max_queue &&
      previous->options().retry_after == limits.retry_after)
    return previous;
  return std::make_shared<util::AdmissionGate>(limits);
}

// The semantic cache of `router`'s configuration: `previous`'s when it fits (a reload keeps the
// answers), else a new one.
std::shared_ptr<SemanticCache> cache_for(const Router& router,
                                         const std::shared_ptr<SemanticCache>& previous,
                                         const RedisLink::Log& log) {
  const auto& s = router.route_settings().semantic_cache;
  if (!s.enabled) return nullptr;
  const auto encoder = router.encoder();
  if (previous && previous->fits(s, encoder.get())) return previous;
  return std::make_shared<SemanticCache>(s, encoder, log);
}

// A JSON answer up to this size is sent whole, with Content-Length, in one write (as nginx's
// proxy_buffering does); SSE streams and larger or unsized bodies stream through.
constexpr std::size_t kBufferedAnswerBytes = 1024 * 1024;

}  // namespace

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

  std::shared_ptr<HttpAppResponse> response;
  std::shared_ptr<const Generation> generation;
  Clock::time_point received = Clock::now();
  std::uint64_t received_unix_nano = util::SpanRecord::now_unix_nano();
  util::SpanContext span;                 // this request's, under the caller's traceparent
  std::shared_ptr<util::SpanSink> spans;  // null: spans are not recorded
  std::string path;
  bool routed = false;
  RouteEvaluation evaluation;  // routed: the decision and the request to forward
  std::string raw;             // passed through: the body as received
  RequestApi api = RequestApi::chat_completions;
  std::string accept;
  HttpHeaders client_headers;  // anthropic-version and anthropic-beta, for the upstream
  // The client connection's I/O context: the upstream exchange runs there (null: a lane's own
  // thread).
  std::shared_ptr<boost::asio::io_context> context;
  HttpHeaders decision_headers;      // x-vsr-*, x-mcpclass-*
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
  Clock::time_point sent_at;
  // The upstream's status and headers (engine thread only). A small non-streaming answer is
  // collected until complete; a streamed one begins with its first body bytes, so an answer
  // that breaks before any (an endless chunk line, say) still gets a 502.
  bool buffered = false;
  bool begun = false;
  unsigned status = 0;
  HttpHeaders headers;
  std::string body;
  util::SpanContext upstream_span;  // of the exchange running: the upstream's parent
  std::uint64_t upstream_start = 0;
};

struct RouteProxy::Impl : std::enable_shared_from_this<Impl> {
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

  void retire(std::shared_ptr<const RouteTable> table) {
    std::lock_guard lock(retired_mutex);
    retired.push_back(std::move(table));
    any_retired = true;
  }

  // Destroys the retired tables no request holds any more (outside the lock: it joins threads).
  void reap() {
    if (!any_retired.load()) return;
    std::vector<std::shared_ptr<const RouteTable>> unused;
    {
      std::lock_guard lock(retired_mutex);
      auto held = std::partition(retired.begin(), retired.end(),
                                 [](const auto& t) { return t.use_count() > 1; });
      unused.assign(std::make_move_iterator(held), std::make_move_iterator(retired.end()));
      retired.erase(held, retired.end());
      any_retired = !retired.empty();
    }
  }

  // One log line about `fwd`'s request, with its trace id.
  // Redis's failures and recoveries, for the links' logs.
  RedisLink::Log redis_log() const {
    if (!options.log) return nullptr;
    return [log = options.log](std::string_view m) { log(fmt::format("mcpclass route: {}", m)); };
  }

  void log(const Forward& fwd, std::string_view message) const {
    if (options.log)
      options.log(fmt::format("mcpclass route: trace={} {} {}", fwd.span.trace_id_hex(), fwd.path,
                              message));
  }

  // The span of one piece of `fwd`'s work, a child of its request's span.
  void record(const Forward& fwd, util::SpanContext context, std::string name,
              util::SpanRecord::Kind kind, std::uint64_t start,
              std::vector<std::pair<std::string, std::string>> attributes,
              std::string_view error = {}) const {
    if (fwd.spans)
      fwd.spans->record(util::SpanRecord::ending_now(std::move(context), std::move(name), kind,
                                                     start, std::move(attributes), error));
  }

  void models(HttpAppResponse& response) const {
    const auto generation = current.load();  // held: a reload may retire its table meanwhile
    const auto& settings = generation->table->settings();
    json::array data;
    auto add = [&](const std::string& id) {
      data.push_back(
          json::object{{"id", id}, {"object", "model"}, {"created", 0}, {"owned_by", "mcpclass"}});
    };
    for (const auto& name : settings.routed_models) add(name);
    for (const auto& [name, u] : settings.models) add(name);
    response.respond(200, {{"Content-Type", kJson}},
                     json::serialize(json::object{{"object", "list"}, {"data", std::move(data)}}));
  }

  void chat(HttpAppRequest& request, const std::shared_ptr<HttpAppResponse>& response, bool explain,
            RequestApi api) {
    auto parsed = jsonrpc::parse_json(request.body, {.max_bytes = request.body.size() + 1});
    if (auto* error = std::get_if<jsonrpc::Error>(&parsed)) {
      return error_response(api, *response, 400,
                            fmt::format("The body is not valid JSON ({})", error->message),
                            "invalid_request_error", "invalid_request");
    }
    auto& body = std::get<json::value>(parsed);
    if (!body.is_object())
      return error_response(api, *response, 400, "The body must be a JSON object",
                            "invalid_request_error", "invalid_request");
    if (auto problem = util::request_timeout_error(request.header(util::kRequestTimeoutHeader)))
      return error_response(api, *response, 400, *problem, "invalid_request_error",
                            "invalid_request");
    auto fwd = std::make_shared<Forward>();
    fwd->span = util::start_span(util::parse_traceparent(request.header(util::kTraceparentHeader),
                                                         request.header(util::kTracestateHeader)));
    if (options.spans && fwd->span.sampled()) fwd->spans = options.spans;
    fwd->path = request.path;
    fwd->api = api;
    for (const auto* name : {"anthropic-version", "anthropic-beta"})
      if (const auto value = request.header(name); !value.empty())
        fwd->client_headers.emplace_back(name, value);
    fwd->response = response;
    fwd->context = std::move(request.io_context);
    fwd->generation = current.load();
    fwd->accept = std::string(request.header("accept"));
    fwd->raw = std::move(request.body);
    const auto& conv = fwd->generation->router->route_settings().conversation;
    std::string key;
    if (conv.enabled)
      key = conversation_key(
          body.get_object(), conv, [&](std::string_view name) { return request.header(name); },
          request.client_address);
    // Rules answer in microseconds: a hop to a worker would cost more than it spares. A
    // conversation kept in Redis, or a cache shared through it, waits on Redis, which the
    // connection's thread must not (it serves other requests, /health among them).
    const bool waits = (!key.empty() && conversations.shared()) ||
                       (fwd->generation->cache && fwd->generation->cache->shared());
    // A slow classifier's place is taken here, on the I/O thread, so that a refusal is at once.
    std::shared_ptr<util::AdmissionGate::Ticket> ticket;
    if (const auto& gate = fwd->generation->gate) {
      auto admission =
          gate->admit(util::deadline_after_ms(request.header(util::kRequestTimeoutHeader)));
      if (!admission.ticket)
        return overloaded(fwd, std::move(body.get_object()), explain, admission.refusal);
      ticket = std::move(admission.ticket);
    }
    auto decide = [self = shared_from_this(), fwd, explain, key = std::move(key),
                   object = std::move(body.get_object()), ticket = std::move(ticket)]() mutable {
      if (ticket) {
        if (const auto why = ticket->start(); why != util::AdmissionRefusal::none)
          return self->overloaded(fwd, std::move(object), explain, why);
      }
      self->decide(fwd, std::move(object), explain, key, ticket.get());
    };
    if (!fwd->generation->router->slow() && !waits) return decide();
    pool.post(std::move(decide));
  }

  // A request whose classification was refused (no place, or its deadline passed) or failed:
  // route.admission's fail-open forwards it to its model unclassified, fail-closed answers 503
  // (a failure: 500). An explanation is never forwarded.
  void overloaded(const std::shared_ptr<Forward>& fwd, json::object request, bool explain,
                  util::AdmissionRefusal why, std::string_view failure = {}) {
    const bool failed = why == util::AdmissionRefusal::none;
    const std::string_view reason = failed                                   ? "failed"
                                    : why == util::AdmissionRefusal::expired ? "expired"
                                                                             : "rejected";
    const auto& admission = fwd->generation->router->route_settings().admission;
    log(*fwd, fmt::format("classification {}{}{}: {}", reason, failed ? ": " : "", failure,
                          admission.fail_open && !explain ? "forwarded unclassified (fail-open)"
                                                          : "refused"));
    if (admission.fail_open && !explain) {
      metrics.failed_open(reason);
      fwd->evaluation =
          fwd->generation->router->unclassified(std::move(request), admission.model, fwd->api);
      fwd->evaluation.response_headers.emplace_back("x-mcpclass-fail-open", reason);
      return dispatch(fwd, false, Clock::now());
    }
    if (failed)
      return error_response(fwd->api, *fwd->response, 500,
                            fmt::format("Classification failed: {}", failure), "server_error",
                            "classification_failed");
    metrics.refused(reason);
    const auto& gate = *fwd->generation->gate;
    const std::string message =
        why == util::AdmissionRefusal::expired
            ? fmt::format(
                  "The request's deadline passed before it could be classified "
                  "(route.admission: {})",
                  gate.limits_text())
            : fmt::format(
                  "Every classification slot and queue place is taken (route.admission: "
                  "{}); retry later",
                  gate.limits_text());
    error_response(fwd->api, *fwd->response, 503, message, "server_error",
                   fmt::format("classification_{}", reason),
                   {{"Retry-After", util::retry_after_header(gate.options().retry_after)}});
  }

  void decide(const std::shared_ptr<Forward>& fwd, json::object request, bool explain,
              const std::string& conversation, util::AdmissionGate::Ticket* ticket) {
    const auto& router = *fwd->generation->router;
    const auto t0 = Clock::now();
    const auto start_unix_nano = util::SpanRecord::now_unix_nano();
    auto& e = fwd->evaluation;
    // Fail-open forwards the request as it came when its classification fails.
    std::optional<json::object> original;
    if (router.route_settings().admission.fail_open && !explain) original = request;
    // The classification's span, the parent of a remote classifier's call.
    const auto classify_span = fwd->span.child();
    try {
      const auto kept = conversation.empty() ? std::nullopt : conversations.find(conversation);
      e = router.evaluate(std::move(request), options.max_text_length, explain,
                          kept ? &*kept : nullptr, fwd->api,
                          classify::ClassifyOptions{false, &classify_span, fwd->spans.get()});
      // An explanation changes nothing; a block keeps what the conversation had.
      if (!conversation.empty() && !explain && e.action == RouteEvaluation::Action::forward)
        conversations.keep(conversation, e.kept(), router.route_settings().conversation);
    } catch (const std::exception& ex) {
      record(*fwd, classify_span, "classify", util::SpanRecord::Kind::internal, start_unix_nano, {},
             ex.what());
      return overloaded(fwd, original ? std::move(*original) : json::object(), explain,
                        util::AdmissionRefusal::none, ex.what());
    }
    record(*fwd, classify_span, "classify", util::SpanRecord::Kind::internal, start_unix_nano,
           {{"mcpclass.category", e.category}, {"mcpclass.decision", e.decision}});
    if (ticket) ticket->succeeded();
    dispatch(fwd, explain, t0);
  }

  // Carries out the evaluation in fwd->evaluation: an answer here, or the upstream.
  void dispatch(const std::shared_ptr<Forward>& fwd, bool explain, Clock::time_point t0) {
    auto& e = fwd->evaluation;
    HttpHeaders headers(e.response_headers.begin(), e.response_headers.end());
    if (e.action == RouteEvaluation::Action::reject)
      return respond_json(*fwd->response, e.status, std::move(headers), e.error_body);
    if (explain)
      return respond_json(*fwd->response, 200, std::move(headers), json::serialize(e.to_json()));
    if (e.action == RouteEvaluation::Action::passthrough) {
      const auto& upstream_model = fwd->generation->table->find(e.model)->settings.upstream_model;
      if (!e.forwarded.empty())  // route.passthrough_guard redacted it
        fwd->raw = std::move(e.forwarded);
      else if (!upstream_model.empty() && upstream_model != e.model)
        fwd->raw = replace_model(fwd->raw, upstream_model);
      metrics.routed("passthrough", e.model);
      fwd->decision_headers = std::move(headers);  // route.passthrough_guard's, if any
      watch_cancel(fwd);
      return start(fwd, e.model);
    }
    fwd->raw.clear();
    metrics.evaluated(e, std::chrono::duration<double>(Clock::now() - t0).count());
    if (e.action == RouteEvaluation::Action::block)
      return respond_json(*fwd->response, e.status, std::move(headers), e.error_body);
    fwd->routed = true;
    fwd->decision_headers = std::move(headers);
    metrics.routed(!e.category.empty()   ? e.category
                   : !e.decision.empty() ? e.decision
                                         : std::string("fail_open"),
                   e.model);
    if (answered_from_cache(*fwd)) return;
    watch_cancel(fwd);
    start(fwd, e.model);
  }

  // A hit of the semantic cache is answered here, in the form the client asked for; a
  // cacheable miss keeps its ticket, so that its answer is stored when it ends cleanly.
  bool answered_from_cache(Forward& fwd) {
    // Answers are kept and replayed in the chat completions shapes only.
    if (fwd.api != RequestApi::chat_completions) return false;
    const auto& e = fwd.evaluation;
    fwd.cache = open_ticket(fwd.generation->cache, e, *fwd.generation->router);
    if (!fwd.cache) return false;
    const auto t0 = Clock::now();
    const auto hit = fwd.cache->cache->lookup(fwd.cache->query, fwd.cache->threshold);
    if (!hit) return false;
    const double lookup_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    const double encode_ms = fwd.cache->query.encode_ms;
    fwd.cache.reset();
    HttpHeaders headers = std::move(fwd.decision_headers);
    // The lookup's time and the encoder's share of it, so that the search's own cost shows.
    headers.emplace_back(
        "Server-Timing",
        fmt::format("cache-lookup;dur={:.3f}, cache-encode;dur={:.3f}", lookup_ms, encode_ms));
    headers.emplace_back("x-mcpclass-model", e.model);
    headers.emplace_back("x-vsr-cache-hit", "true");
    headers.emplace_back("x-mcpclass-cache-similarity", fmt::format("{:.4f}", hit->similarity));
    const auto* stream = e.body.if_contains("stream");
    const std::string id = fmt::format("chatcmpl-cache-{}", ++cache_answers);
    if (stream && stream->is_bool() && stream->get_bool()) {
      headers.emplace_back("Content-Type", "text/event-stream");
      headers.emplace_back("Cache-Control", "no-cache");
      fwd.response->respond(200, std::move(headers), answer_sse(hit->answer, id));
    } else {
      respond_json(*fwd.response, 200, std::move(headers), answer_json(hit->answer, id));
    }
    return true;
  }

  static void respond_json(HttpAppResponse& response, unsigned status, HttpHeaders headers,
                           std::string body) {
    headers.emplace_back("Content-Type", kJson);
    response.respond(status, std::move(headers), std::move(body));
  }

  void watch_cancel(const std::shared_ptr<Forward>& fwd) {
    {
      std::lock_guard lock(live_mutex);
      live.insert(fwd);
    }
    fwd->response->on_cancel([weak = std::weak_ptr<Forward>(fwd)] {
      if (auto f = weak.lock()) cancel(*f);
    });
  }

  static void cancel(Forward& fwd) {
    std::lock_guard lock(fwd.mutex);
    fwd.cancelled = true;
    if (fwd.engine) fwd.engine->cancel(fwd.id);
  }

  void done(const std::shared_ptr<Forward>& fwd) {
    std::lock_guard lock(live_mutex);
    live.erase(fwd);
  }

  static std::string upstream_body(const Forward& fwd, const Upstream& u) {
    if (!fwd.routed) return fwd.raw;
    if (u.name == fwd.evaluation.model) return fwd.evaluation.forwarded;
    for (const auto& [model, body] : fwd.evaluation.fallbacks)
      if (model == u.name) return body;
    return fwd.generation->router->upstream_body(fwd.evaluation, u.name);
  }

  void start(const std::shared_ptr<Forward>& fwd, const std::string& name) {
    const auto& u = *fwd->generation->table->find(name);
    auto* endpoint = u.pool->pick(fwd->unreachable);
    if (endpoint == nullptr) {  // all tried or ejected: the last failure says why
      if (!fwd->unreached) metrics.upstream_error(name, "unavailable");
      return fail_over(fwd, name, false,
                       fwd->unreached ? fwd->unreached
                                      : net::HttpError{net::HttpFailure::connect,
                                                       "no endpoint in rotation (all ejected)"});
    }
    net::HttpRequest req;
    req.method = "POST";
    req.target =
        fwd->api == RequestApi::responses ? endpoint->responses_target : endpoint->url.target;
    req.headers =
        upstream_headers(u.settings.api_format, endpoint->api_key, [&](std::string_view header) {
          for (const auto& [key, value] : fwd->client_headers)
            if (key == header) return std::string_view(value);
          return std::string_view();
        });
    req.headers.insert(req.headers.begin(),
                       {{"Content-Type", kJson},
                        {"Accept", fwd->accept.empty() ? std::string(kJson) : fwd->accept}});
    if (fwd->routed) mutate_headers(req.headers, fwd->evaluation);
    // The upstream's parent is this call's span, in the request's trace.
    fwd->upstream_span = fwd->span.child();
    fwd->upstream_start = util::SpanRecord::now_unix_nano();
    std::erase_if(req.headers, [](const auto& kv) {
      return boost::beast::iequals(kv.first, util::kTraceparentHeader) ||
             boost::beast::iequals(kv.first, util::kTracestateHeader);
    });
    req.headers.emplace_back(util::kTraceparentHeader, fwd->upstream_span.traceparent());
    if (!fwd->span.tracestate.empty())
      req.headers.emplace_back(util::kTracestateHeader, fwd->span.tracestate);
    req.body = upstream_body(*fwd, u);
    req.timeout = u.settings.timeout;

    net::ExchangeCallbacks cb;
    cb.on_sent = [fwd] {
      std::lock_guard lock(fwd->mutex);
      fwd->sent = true;
      fwd->sent_at = Clock::now();
    };
    cb.on_head = [self = shared_from_this(), fwd, name](const net::HttpHead& head) {
      {
        std::lock_guard lock(fwd->mutex);
        self->metrics.upstream(name,
                               std::chrono::duration<double>(Clock::now() - fwd->sent_at).count());
      }
      HttpHeaders headers;
      for (const auto& [key, value] : head.headers)
        if (passes_through(key)) headers.emplace_back(key, value);
      headers.insert(headers.end(), fwd->decision_headers.begin(), fwd->decision_headers.end());
      headers.emplace_back("x-mcpclass-model", name);
      const auto length = head.header("content-length");
      const std::size_t bytes =
          !length.empty() && length.size() < 8 ? std::stoul(length) : SIZE_MAX;
      fwd->status = static_cast<unsigned>(head.status);
      fwd->headers = std::move(headers);
      if (head.header("content-type").find("text/event-stream") == std::string::npos &&
          bytes <= kBufferedAnswerBytes) {
        fwd->buffered = true;
        fwd->body.reserve(bytes);
      }
    };
    cb.on_data = [self = shared_from_this(), fwd, name](std::string_view data) {
      if (fwd->buffered) {
        fwd->body.append(data);
        return;
      }
      if (!fwd->first_byte) {  // only the engine's thread touches it
        fwd->first_byte = true;
        self->metrics.first_byte(name, seconds_since(fwd->received));
      }
      if (fwd->cache) fwd->cache->capture(data);
      begin(*fwd);
      fwd->response->write(std::string(data));
    };
    cb.on_end = [self = shared_from_this(), fwd, name](const net::HttpError& error) {
      self->ended(fwd, name, error);
    };

    std::lock_guard lock(fwd->mutex);
    fwd->tried.insert(name);
    if (fwd->cancelled) {
      done(fwd);
      return;
    }
    auto& lane = fwd->context ? endpoint->lane_on(fwd->context) : endpoint->next_lane();
    if (!lane.take()) return refuse(fwd, name);
    try {
      fwd->lane = &lane;
      fwd->endpoint = endpoint;
      fwd->engine = &lane.engine();
      fwd->id = fwd->engine->start(endpoint->url, std::move(req), std::move(cb));
    } catch (const std::exception& e) {  // the proxy is stopping
      lane.give_back(false);
      fwd->lane = nullptr;
      fwd->engine = nullptr;
      error_response(fwd->api, *fwd->response, 503,
                     fmt::format("Service unavailable: {}", e.what()), "server_error",
                     "shutting_down");
      done(fwd);
    }
  }

  // The decision's header_mutation: deletes first, then updates replace and adds append.
  static void mutate_headers(HttpHeaders& headers, const RouteEvaluation& e) {
    auto erase = [&](std::string_view name) {
      std::erase_if(headers, [&](const auto& kv) { return boost::beast::iequals(kv.first, name); });
    };
    for (const auto& name : e.upstream_headers_removed) erase(name);
    for (const auto& [name, value] : e.upstream_headers) {
      erase(name);
      headers.emplace_back(name, value);
    }
  }

  // No descriptor for an upstream socket: connecting would fail like a dead upstream (and
  // starve the server's own connections), so the client is asked to come back instead.
  void refuse(const std::shared_ptr<Forward>& fwd, const std::string& name) {
    metrics.refused("descriptors");
    const auto& budget = *options.descriptors;
    HttpHeaders headers = fwd->decision_headers;
    headers.emplace_back("Retry-After", "1");
    error_response(fwd->api, *fwd->response, 503,
                   fmt::format("Too many connections: no descriptor left for a connection to "
                               "upstream '{}' ({} of {} in use); retry later",
                               name, budget.in_use(), budget.limit()),
                   "server_error", "too_many_connections", std::move(headers));
    done(fwd);
  }

  static void begin(Forward& fwd) {
    if (fwd.begun) return;
    fwd.begun = true;
    fwd.response->begin(fwd.status, std::move(fwd.headers));
  }

  // Passive health: a complete answer below 500 is a success; a 5xx, a connect failure, a
  // timeout or a broken answer counts toward the endpoint's ejection.
  static void health(BackendPool& pool, Endpoint& endpoint, const net::HttpError& error,
                     unsigned status) {
    if (error || status >= 500) {
      pool.failed(endpoint);
    } else {
      pool.succeeded(endpoint);
    }
  }

  void ended(const std::shared_ptr<Forward>& fwd, const std::string& name,
             const net::HttpError& error) {
    bool sent = false, cancelled = false;
    Endpoint* endpoint = nullptr;
    {
      std::lock_guard lock(fwd->mutex);
      sent = fwd->sent;
      cancelled = fwd->cancelled || error.kind == net::HttpFailure::cancelled;
      fwd->lane->give_back(!error);
      fwd->lane = nullptr;
      endpoint = std::exchange(fwd->endpoint, nullptr);
      fwd->engine = nullptr;
      fwd->sent = false;
      if (error) {
        // A collected answer that broke was never sent: an error still fits.
        fwd->body.clear();
      }
    }
    const auto& u = *fwd->generation->table->find(name);
    if (!cancelled) health(*u.pool, *endpoint, error, fwd->status);
    record(*fwd, fwd->upstream_span, "upstream " + name, util::SpanRecord::Kind::client,
           fwd->upstream_start,
           {{"mcpclass.endpoint", endpoint->name},
            {"http.response.status_code", std::to_string(fwd->status)}},
           error ? std::string_view(error.message) : std::string_view());
    if (!error) {
      // Stored only when the routed model itself answered (not a fallback).
      if (fwd->cache && name == fwd->evaluation.model)
        fwd->cache->finish(fwd->status, fwd->buffered ? std::string_view(fwd->body) : "");
      if (fwd->buffered) {
        metrics.first_byte(name, seconds_since(fwd->received));
        fwd->response->respond(fwd->status, std::move(fwd->headers), std::move(fwd->body));
      } else {
        begin(*fwd);
        fwd->response->end();
      }
      return done(fwd);
    }
    if (fwd->begun) {
      // Part of the answer went out: the client must see it truncated, not complete.
      if (!cancelled) metrics.upstream_error(name, "broken");
      fwd->response->abort();
      return done(fwd);
    }
    if (cancelled) {
      error_response(fwd->api, *fwd->response, 503,
                     "The request was cancelled (the server is stopping)", "server_error",
                     "cancelled", fwd->decision_headers);
      return done(fwd);
    }
    const bool timeout = error.kind == net::HttpFailure::timeout;
    metrics.upstream_error(name, !sent ? "connect" : timeout ? "timeout" : "broken");
    net::HttpError failure{error.kind, fmt::format("endpoint '{}' ({}): {}", endpoint->name,
                                                   endpoint->url.origin(), error.message)};
    if (!sent) {  // the upstream never saw it: another endpoint of the pool may take it
      fwd->unreachable.push_back(endpoint);
      fwd->unreached = failure;
      const auto tried = std::count_if(fwd->unreachable.begin(), fwd->unreachable.end(),
                                       [&](const Endpoint* e) { return u.pool->contains(*e); });
      if (u.pool->may_retry(static_cast<std::size_t>(tried))) return start(fwd, name);
    }
    fail_over(fwd, name, sent, failure);
  }

  // A request its pool could not serve: a connect failure goes to the model's fallback (a routed
  // request only: a passed-through one named its model), anything else is a 502 or 504.
  void fail_over(const std::shared_ptr<Forward>& fwd, const std::string& name, bool sent,
                 const net::HttpError& error) {
    const bool timeout = error.kind == net::HttpFailure::timeout;
    const auto& u = *fwd->generation->table->find(name);
    const auto& fallback = u.settings.fallback;
    // A passed-through request named its model: it is not silently served by another.
    if (!sent && !fallback.empty() && fwd->routed) {
      bool fresh = false;
      {
        std::lock_guard lock(fwd->mutex);
        fresh = !fwd->tried.contains(fallback);
      }
      if (fresh) {
        fwd->unreached = {};
        return start(fwd, fallback);
      }
    }
    HttpHeaders headers = fwd->decision_headers;
    headers.emplace_back("x-mcpclass-model", name);
    const bool gateway_timeout = sent && timeout;
    log(*fwd, fmt::format("upstream '{}' {}: {}", name, gateway_timeout ? "timed out" : "failed",
                          error.message));
    error_response(fwd->api, *fwd->response, gateway_timeout ? 504 : 502,
                   fmt::format("Upstream '{}' {}: {}", name,
                               gateway_timeout ? "timed out" : "failed", error.message),
                   "server_error", gateway_timeout ? "upstream_timeout" : "upstream_unavailable",
                   std::move(headers));
    done(fwd);
  }
};

RouteProxy::RouteProxy(std::shared_ptr<const Router> router, RouteProxyOptions options)
    : impl_(std::make_shared<Impl>(std::move(options))) {
  if (!router) throw std::invalid_argument("RouteProxy: no router");
  auto table =
      std::make_shared<const RouteTable>(router->route_settings(), impl_->options.descriptors);
  auto cache = cache_for(*router, nullptr, impl_->redis_log());
  impl_->conversations.share(router->route_settings().conversation, impl_->redis_log());
  auto gate = gate_for(*router, nullptr);
  impl_->current.store(std::make_shared<const Generation>(
      Generation{std::move(router), std::move(table), std::move(cache), std::move(gate)}));
}

std::function<void()> RouteProxy::prepare(std::shared_ptr<const Router> router) {
  if (!router) throw std::invalid_argument("RouteProxy::prepare: no router");
  const auto before = impl_->current.load();
  auto table = before->table;
  // Unchanged upstreams keep their connections; any change builds them all anew.
  if (table->settings().to_json() != router->route_settings().to_json())
    table =
        std::make_shared<const RouteTable>(router->route_settings(), impl_->options.descriptors);
  auto cache = cache_for(*router, before->cache, impl_->redis_log());
  // The conversations' link starts when the reload is committed, which must not throw: its
  // secrets are resolved here.
  if (const auto& c = router->route_settings().conversation;
      c.enabled && c.backend_type == "redis") {
    util::resolve_env_reference(c.redis.username, "route.conversation.redis.username");
    util::resolve_env_reference(c.redis.password, "route.conversation.redis.password");
  }
  auto gate = gate_for(*router, before->gate);
  auto next = std::make_shared<const Generation>(
      Generation{std::move(router), table, std::move(cache), std::move(gate)});
  return [impl = impl_, next = std::move(next)] {
    impl->conversations.share(next->router->route_settings().conversation, impl->redis_log());
    auto previous = impl->current.exchange(next);
    if (previous->table != next->table) impl->retire(previous->table);
    previous.reset();  // so that an idle proxy closes the old pools now
    impl->reap();
  };
}

RouteProxy::~RouteProxy() {
  stop();
}

bool RouteProxy::handles(std::string_view path) const {
  return path == "/v1" || path.starts_with("/v1/");
}

void RouteProxy::handle(HttpAppRequest request, std::shared_ptr<HttpAppResponse> response) {
  auto& impl = *impl_;
  impl.reap();
  constexpr auto kChat = RequestApi::chat_completions;
  if (request.path == kModelsPath) {
    if (request.method != "GET")
      return error_response(kChat, *response, 405, "GET /v1/models", "invalid_request_error",
                            "method_not_allowed", {{"Allow", "GET"}});
    return impl.models(*response);
  }
  const bool explain = request.path == kExplainPath;
  const auto api = explain ? std::optional(kChat) : api_at(request.path);
  if (!api)
    return error_response(
        kChat, *response, 404,
        fmt::format("No such endpoint: {} (this proxy serves {}, {}, {}, {} and {})", request.path,
                    path_of(kChat), path_of(RequestApi::messages), path_of(RequestApi::responses),
                    kExplainPath, kModelsPath),
        "invalid_request_error", "not_found");
  if (request.method != "POST")
    return error_response(*api, *response, 405, fmt::format("POST {}", request.path),
                          "invalid_request_error", "method_not_allowed", {{"Allow", "POST"}});
  impl.chat(request, response, explain, *api);
}

std::string RouteProxy::too_large_body(std::string_view message) const {
  return openai_error(message, "invalid_request_error", "request_too_large");
}

void RouteProxy::cancel_all() {
  std::vector<std::shared_ptr<Forward>> all;
  {
    std::lock_guard lock(impl_->live_mutex);
    all.assign(impl_->live.begin(), impl_->live.end());
  }
  for (const auto& fwd : all) Impl::cancel(*fwd);
}

std::string RouteProxy::prometheus() const {
  std::size_t in_flight = 0;
  {
    std::lock_guard lock(impl_->live_mutex);
    in_flight = impl_->live.size();
  }
  const auto cache = impl_->current.load()->cache;
  const auto gate = impl_->current.load()->gate;
  return impl_->metrics.prometheus() + impl_->current.load()->table->prometheus() +
         (cache ? cache->prometheus() : std::string()) + impl_->conversations.prometheus() +
         (gate ? util::admission_prometheus(gate->counts(), "mcpclass_route_admission",
                                            "Routed requests to classify")
               : std::string()) +
         fmt::format(
             "# HELP mcpclass_route_in_flight Requests between their decision and their answer.\n"
             "# TYPE mcpclass_route_in_flight gauge\nmcpclass_route_in_flight {}\n",
             in_flight);
}

void RouteProxy::stop() {
  {
    std::lock_guard lock(impl_->live_mutex);
    if (impl_->stopped) return;
    impl_->stopped = true;
  }
  cancel_all();
  impl_->pool.stop();
  impl_->current.load()->table->stop();
  {
    std::lock_guard lock(impl_->retired_mutex);
    for (const auto& table : impl_->retired) table->stop();
  }
  std::lock_guard lock(impl_->live_mutex);
  impl_->live.clear();
}

}  // namespace mcpclass::route
