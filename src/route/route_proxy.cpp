// The routing proxy: request validation and the decision on the server's threads (or the
// workers, for classifiers slower than rules), then one Forward per request that carries it to
// its upstream, its fallbacks if the upstream cannot be reached, and streams the answer back.
#include "mcpclass/route/route_proxy.hpp"

#include "mcpclass/classify/errors.hpp"
#include "mcpclass/jsonrpc/message.hpp"
#include "mcpclass/service/http_options.hpp"
#include "mcpclass/util/executor.hpp"
#include "net/http_client.hpp"
#include "route/chat_request.hpp"
#include "route/route_metrics.hpp"

#include <fmt/format.h>
#include <boost/beast/core/string.hpp>
#include <boost/json.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>

namespace mcpclass::route {

namespace json = boost::json;
namespace td = transport::detail;
using transport::HttpAppRequest;
using transport::HttpAppResponse;
using transport::HttpHeaders;
using Clock = std::chrono::steady_clock;

namespace {

constexpr std::string_view kChatPath = "/v1/chat/completions";
constexpr std::string_view kModelsPath = "/v1/models";
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

void error_response(HttpAppResponse& response, unsigned status, std::string_view message,
                    std::string_view type, std::string_view code, HttpHeaders headers = {}) {
  headers.emplace_back("Content-Type", kJson);
  response.respond(status, std::move(headers), openai_error(message, type, code));
}

struct Upstream {
  std::string name;
  config::RouteUpstream settings;
  td::HttpUrl url;  // <base_url>/chat/completions
  std::string api_key;
  /// Upstream I/O threads, each with its own keep-alive pool; requests take turns.
  std::vector<std::unique_ptr<td::HttpEngine>> engines;
};

// A JSON answer up to this size is sent whole, with Content-Length, in one write (as nginx's
// proxy_buffering does); SSE streams and larger or unsized bodies stream through.
constexpr std::size_t kBufferedAnswerBytes = 1024 * 1024;

}  // namespace

// One client request on its way through its upstream and fallbacks. Callbacks run on the
// upstream engines' threads, cancellation on the client connection's strand: `mutex` orders them.
struct Forward {
  std::shared_ptr<HttpAppResponse> response;
  Clock::time_point received = Clock::now();
  bool routed = false;
  json::object request;  // routed: the client's request with the category's system prompt
  std::string raw;       // passed through: the body as received
  std::string accept;
  bool use_reasoning = false;
  HttpHeaders decision_headers;  // x-mcpclass-category, -reasoning, -confidence

  std::mutex mutex;
  std::set<std::string> tried;
  td::HttpEngine* engine = nullptr;
  td::HttpEngine::ExchangeId id = 0;
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
};

struct RouteProxy::Impl : std::enable_shared_from_this<Impl> {
  Impl(config::RouteSettings s, RouteProxyOptions o)
      : settings(std::move(s)), options(std::move(o)), pool(options.worker_threads) {}

  config::RouteSettings settings;
  RouteProxyOptions options;
  std::map<std::string, Upstream, std::less<>> upstreams;
  RouteMetrics metrics;
  util::ThreadPool pool;
  std::mutex live_mutex;
  std::set<std::shared_ptr<Forward>> live;
  bool stopped = false;
  std::atomic<std::size_t> turn{0};

  bool routed_name(std::string_view model) const {
    for (const auto& name : settings.routed_models)
      if (name == model) return true;
    return false;
  }

  void models(HttpAppResponse& response) const {
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

  void chat(HttpAppRequest& request, const std::shared_ptr<HttpAppResponse>& response) {
    auto parsed = jsonrpc::parse_json(request.body, {.max_bytes = request.body.size() + 1});
    if (auto* error = std::get_if<jsonrpc::Error>(&parsed)) {
      return error_response(*response, 400,
                            fmt::format("The body is not valid JSON ({})", error->message),
                            "invalid_request_error", "invalid_request");
    }
    auto& body = std::get<json::value>(parsed);
    if (!body.is_object())
      return error_response(*response, 400, "The body must be a JSON object",
                            "invalid_request_error", "invalid_request");
    auto& object = body.get_object();
    const auto* messages = object.if_contains("messages");
    if (messages == nullptr || !messages->is_array())
      return error_response(*response, 400, "'messages' is required and must be an array",
                            "invalid_request_error", "invalid_request");
    const auto* model_value = object.if_contains("model");
    if (model_value != nullptr && !model_value->is_string())
      return error_response(*response, 400, "'model' must be a string", "invalid_request_error",
                            "invalid_request");
    const std::string model = model_value ? std::string(model_value->get_string()) : "auto";

    const bool routed = routed_name(model);
    if (!routed && !upstreams.contains(model)) {
      return error_response(
          *response, 404,
          fmt::format("The model '{}' does not exist: GET /v1/models lists the models", model),
          "invalid_request_error", "model_not_found");
    }
    auto fwd = std::make_shared<Forward>();
    fwd->response = response;
    fwd->accept = std::string(request.header("accept"));
    watch_cancel(fwd);
    if (!routed) {
      fwd->raw = std::move(request.body);
      metrics.routed("passthrough", model);
      return start(fwd, model);
    }
    fwd->routed = true;
    fwd->request = std::move(object);
    auto classifier = options.classifier();
    auto decide = [self = shared_from_this(), fwd, classifier] { self->decide(fwd, *classifier); };
    // Rules answer in microseconds: a hop to a worker would cost more than it spares.
    if (classifier->kind() == "rules") return decide();
    pool.post(std::move(decide));
  }

  void decide(const std::shared_ptr<Forward>& fwd, const classify::Classifier& classifier) {
    const auto t0 = Clock::now();
    classify::Classification c;
    try {
      const std::string text = prompt_text(fwd->request, settings.text);
      c = classifier.classify(utf8_prefix(text, options.max_text_length));
    } catch (const std::exception& e) {
      error_response(*fwd->response, 500, fmt::format("Classification failed: {}", e.what()),
                     "server_error", "classification_failed");
      return done(fwd);
    }
    const auto* category = classifier.categories().find(c.category);
    apply_system_prompt(fwd->request, category ? category->system_prompt : std::string(),
                        settings.system_prompt);
    fwd->use_reasoning = c.use_reasoning;
    fwd->decision_headers = {{"x-mcpclass-category", c.category},
                             {"x-mcpclass-reasoning", c.use_reasoning ? "true" : "false"},
                             {"x-mcpclass-confidence", fmt::format("{:.6f}", c.confidence)}};
    metrics.decision(std::chrono::duration<double>(Clock::now() - t0).count());
    if (!upstreams.contains(c.model)) {
      // A reload may bring categories whose models this proxy was not started with.
      error_response(*fwd->response, 500,
                     fmt::format("No upstream for model '{}' (route.models)", c.model),
                     "server_error", "no_upstream", fwd->decision_headers);
      return done(fwd);
    }
    metrics.routed(c.category, c.model);
    start(fwd, c.model);
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

  std::string upstream_body(const Forward& fwd, const Upstream& u) const {
    if (!fwd.routed) return fwd.raw;
    json::object out = fwd.request;
    out["model"] = u.settings.upstream_model.empty() ? u.name : u.settings.upstream_model;
    write_reasoning(out, u.settings, fwd.use_reasoning);
    return json::serialize(out);
  }

  void start(const std::shared_ptr<Forward>& fwd, const std::string& name) {
    auto& u = upstreams.find(name)->second;
    td::HttpRequest req;
    req.method = "POST";
    req.target = u.url.target;
    req.headers = {{"Content-Type", kJson},
                   {"Accept", fwd->accept.empty() ? std::string(kJson) : fwd->accept}};
    if (!u.api_key.empty()) req.headers.emplace_back("Authorization", "Bearer " + u.api_key);
    req.body = upstream_body(*fwd, u);
    req.timeout = u.settings.timeout;

    td::ExchangeCallbacks cb;
    cb.on_sent = [fwd] {
      std::lock_guard lock(fwd->mutex);
      fwd->sent = true;
      fwd->sent_at = Clock::now();
    };
    cb.on_head = [self = shared_from_this(), fwd, name](const td::HttpHead& head) {
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
      begin(*fwd);
      fwd->response->write(std::string(data));
    };
    cb.on_end = [self = shared_from_this(), fwd, name](const td::HttpError& error) {
      self->ended(fwd, name, error);
    };

    std::lock_guard lock(fwd->mutex);
    fwd->tried.insert(name);
    if (fwd->cancelled) {
      done(fwd);
      return;
    }
    try {
      auto& engine = *u.engines[turn.fetch_add(1, std::memory_order_relaxed) % u.engines.size()];
      fwd->engine = &engine;
      fwd->id = engine.start(u.url, std::move(req), std::move(cb));
    } catch (const std::exception& e) {  // the proxy is stopping
      fwd->engine = nullptr;
      error_response(*fwd->response, 503, fmt::format("Service unavailable: {}", e.what()),
                     "server_error", "shutting_down");
      done(fwd);
    }
  }

  static void begin(Forward& fwd) {
    if (fwd.begun) return;
    fwd.begun = true;
    fwd.response->begin(fwd.status, std::move(fwd.headers));
  }

  void ended(const std::shared_ptr<Forward>& fwd, const std::string& name,
             const td::HttpError& error) {
    bool sent = false, cancelled = false;
    {
      std::lock_guard lock(fwd->mutex);
      sent = fwd->sent;
      cancelled = fwd->cancelled || error.kind == td::HttpFailure::cancelled;
      fwd->engine = nullptr;
      fwd->sent = false;
      if (error) {
        // A collected answer that broke was never sent: an error still fits.
        fwd->body.clear();
      }
    }
    if (!error) {
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
      error_response(*fwd->response, 503, "The request was cancelled (the server is stopping)",
                     "server_error", "cancelled", fwd->decision_headers);
      return done(fwd);
    }
    const bool timeout = error.kind == td::HttpFailure::timeout;
    metrics.upstream_error(name, !sent ? "connect" : timeout ? "timeout" : "broken");
    const auto& u = upstreams.find(name)->second;
    const auto& fallback = u.settings.fallback;
    // A passed-through request named its model: it is not silently served by another.
    if (!sent && !fallback.empty() && fwd->routed) {
      bool fresh = false;
      {
        std::lock_guard lock(fwd->mutex);
        fresh = !fwd->tried.contains(fallback);
      }
      if (fresh) return start(fwd, fallback);
    }
    HttpHeaders headers = fwd->decision_headers;
    headers.emplace_back("x-mcpclass-model", name);
    const bool gateway_timeout = sent && timeout;
    error_response(*fwd->response, gateway_timeout ? 504 : 502,
                   fmt::format("Upstream '{}' ({}) {}: {}", name, u.url.origin(),
                               gateway_timeout ? "timed out" : "failed", error.message),
                   "server_error", gateway_timeout ? "upstream_timeout" : "upstream_unavailable",
                   std::move(headers));
    done(fwd);
  }
};

RouteProxy::RouteProxy(config::RouteSettings settings, RouteProxyOptions options)
    : impl_(std::make_shared<Impl>(std::move(settings), std::move(options))) {
  if (!impl_->options.classifier) throw std::invalid_argument("RouteProxy: no classifier");
  for (const auto& [name, s] : impl_->settings.models) {
    const std::string path = "route.models." + name;
    Upstream u;
    u.name = name;
    u.settings = s;
    u.api_key = service::resolve_env_reference(s.api_key, path + ".api_key");
    try {
      u.url = td::parse_http_url(s.base_url + std::string(kChatPath.substr(3)));
      for (std::size_t i = 0; i < std::max<std::size_t>(1, impl_->settings.upstream_threads); ++i) {
        auto& engine = u.engines.emplace_back(std::make_unique<td::HttpEngine>(
            s.connect_timeout, s.ca_file, SIZE_MAX, impl_->settings.keep_alive_connections));
        if (u.url.tls) engine->prepare_tls();
      }
    } catch (const std::exception& e) {
      throw classify::ConfigError(path, e.what());
    }
    impl_->upstreams.emplace(name, std::move(u));
  }
}

RouteProxy::~RouteProxy() {
  stop();
}

bool RouteProxy::handles(std::string_view path) const {
  return path == "/v1" || path.starts_with("/v1/");
}

void RouteProxy::handle(HttpAppRequest request, std::shared_ptr<HttpAppResponse> response) {
  auto& impl = *impl_;
  if (request.path == kModelsPath) {
    if (request.method != "GET")
      return error_response(*response, 405, "GET /v1/models", "invalid_request_error",
                            "method_not_allowed", {{"Allow", "GET"}});
    return impl.models(*response);
  }
  if (request.path != kChatPath)
    return error_response(*response, 404,
                          fmt::format("No such endpoint: {} (this proxy serves {} and {})",
                                      request.path, kChatPath, kModelsPath),
                          "invalid_request_error", "not_found");
  if (request.method != "POST")
    return error_response(*response, 405, "POST /v1/chat/completions", "invalid_request_error",
                          "method_not_allowed", {{"Allow", "POST"}});
  impl.chat(request, response);
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
  return impl_->metrics.prometheus() +
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
  for (auto& [name, u] : impl_->upstreams)
    for (auto& engine : u.engines) engine->stop();
  std::lock_guard lock(impl_->live_mutex);
  impl_->live.clear();
}

}  // namespace mcpclass::route
