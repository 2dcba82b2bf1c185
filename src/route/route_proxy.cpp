// The routing proxy: a request's lifetime. Its checks and its Forward here, then the stages of
// proxy_stages.hpp in order: evaluate (admission and the classification), guard, cache, forward.
#include "mcpclass/route/route_proxy.hpp"

#include "mcpclass/jsonrpc/message.hpp"
#include "route/chat_request.hpp"
#include "route/proxy_stages.hpp"
#include "route/redis_link.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <utility>
#include <vector>

namespace mcpclass::route {

namespace json = boost::json;
using transport::server::HttpAppRequest;
using transport::server::HttpAppResponse;
using transport::server::HttpHeaders;

namespace {

constexpr std::string_view kModelsPath = "/v1/models";
constexpr std::string_view kExplainPath = "/v1/route/explain";

}  // namespace

void error_response(RequestApi api, HttpAppResponse& response, unsigned status,
                    std::string_view message, std::string_view type, std::string_view code,
                    HttpHeaders headers, std::string_view param) {
  headers.emplace_back("Content-Type", kJson);
  response.respond(status, std::move(headers), api_error(api, status, message, type, code, param));
}

void respond_json(HttpAppResponse& response, unsigned status, HttpHeaders headers,
                  std::string body) {
  headers.emplace_back("Content-Type", kJson);
  response.respond(status, std::move(headers), std::move(body));
}

void RouteProxy::Impl::retire(std::shared_ptr<const RouteTable> table) {
  std::lock_guard lock(retired_mutex);
  retired.push_back(std::move(table));
  any_retired = true;
}

// Destroys the retired tables no request holds any more (outside the lock: it joins threads).
void RouteProxy::Impl::reap() {
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

// Redis's failures and recoveries, for the links' logs.
RedisLink::Log RouteProxy::Impl::redis_log() const {
  if (!options.log) return nullptr;
  return [log = options.log](std::string_view m) { log(fmt::format("mcpclass route: {}", m)); };
}

void RouteProxy::Impl::log(const Forward& fwd, std::string_view message) const {
  if (options.log)
    options.log(
        fmt::format("mcpclass route: trace={} {} {}", fwd.span.trace_id_hex(), fwd.path, message));
}

// The span of one piece of `fwd`'s work, a child of its request's span.
void RouteProxy::Impl::record(const Forward& fwd, util::SpanContext context, std::string name,
                              util::SpanRecord::Kind kind, std::uint64_t start,
                              std::vector<std::pair<std::string, std::string>> attributes,
                              std::string_view error) const {
  if (fwd.spans)
    fwd.spans->record(util::SpanRecord::ending_now(std::move(context), std::move(name), kind, start,
                                                   std::move(attributes), error));
}

void RouteProxy::Impl::models(HttpAppResponse& response) const {
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

void RouteProxy::Impl::chat(HttpAppRequest& request,
                            const std::shared_ptr<HttpAppResponse>& response, bool explain,
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
  evaluate(fwd, std::move(body.get_object()), explain, std::move(key),
           request.header(util::kRequestTimeoutHeader));
}

// The stages after the evaluation, in order: the evaluation's own answer or the passthrough
// guard's request, then a routed request's cache look-up, then the upstream.
void RouteProxy::Impl::dispatch(const std::shared_ptr<Forward>& fwd, bool explain,
                                Clock::time_point t0) {
  if (answered_by_guard(*fwd, explain, t0)) return;
  if (fwd->routed && answered_from_cache(*fwd)) return;
  watch_cancel(fwd);
  start(fwd, fwd->evaluation.model);
}

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
  // secrets and TLS files are checked here.
  if (const auto& c = router->route_settings().conversation; c.enabled && c.backend_type == "redis")
    RedisLink::check(c.redis, "route.conversation.redis");
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
