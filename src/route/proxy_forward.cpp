// A request on its way to its upstream: an endpoint of the model's pool, retries on another
// before the request was sent, the fallback model after a connect failure, the answer collected
// or streamed back, and cancellation when the client goes or the proxy stops.
#include "route/proxy_stages.hpp"

#include <fmt/format.h>
#include <boost/beast/core/string.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <string>
#include <utility>
#include <vector>

namespace mcpclass::route {

using transport::server::HttpHeaders;

namespace {

using Clock = std::chrono::steady_clock;

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

// A JSON answer up to this size is sent whole, with Content-Length, in one write (as nginx's
// proxy_buffering does); SSE streams and larger or unsized bodies stream through.
constexpr std::size_t kBufferedAnswerBytes = 1024 * 1024;

}  // namespace

void RouteProxy::Impl::watch_cancel(const std::shared_ptr<Forward>& fwd) {
  {
    std::lock_guard lock(live_mutex);
    live.insert(fwd);
  }
  fwd->response->on_cancel([weak = std::weak_ptr<Forward>(fwd)] {
    if (auto f = weak.lock()) cancel(*f);
  });
}

void RouteProxy::Impl::cancel(Forward& fwd) {
  std::lock_guard lock(fwd.mutex);
  fwd.cancelled = true;
  if (fwd.engine) fwd.engine->cancel(fwd.id);
}

void RouteProxy::Impl::done(const std::shared_ptr<Forward>& fwd) {
  std::lock_guard lock(live_mutex);
  live.erase(fwd);
}

std::string RouteProxy::Impl::upstream_body(const Forward& fwd, const Upstream& u) {
  if (!fwd.routed) return fwd.raw;
  if (u.name == fwd.evaluation.model) return fwd.evaluation.forwarded;
  for (const auto& [model, body] : fwd.evaluation.fallbacks)
    if (model == u.name) return body;
  return fwd.generation->router->upstream_body(fwd.evaluation, u.name);
}

void RouteProxy::Impl::start(const std::shared_ptr<Forward>& fwd, const std::string& name) {
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
    const std::size_t bytes = !length.empty() && length.size() < 8 ? std::stoul(length) : SIZE_MAX;
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
    error_response(fwd->api, *fwd->response, 503, fmt::format("Service unavailable: {}", e.what()),
                   "server_error", "shutting_down");
    done(fwd);
  }
}

// The decision's header_mutation: deletes first, then updates replace and adds append.
void RouteProxy::Impl::mutate_headers(HttpHeaders& headers, const RouteEvaluation& e) {
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
void RouteProxy::Impl::refuse(const std::shared_ptr<Forward>& fwd, const std::string& name) {
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

void RouteProxy::Impl::begin(Forward& fwd) {
  if (fwd.begun) return;
  fwd.begun = true;
  fwd.response->begin(fwd.status, std::move(fwd.headers));
}

// Passive health: a complete answer below 500 is a success; a 5xx, a connect failure, a
// timeout or a broken answer counts toward the endpoint's ejection.
void RouteProxy::Impl::health(BackendPool& pool, Endpoint& endpoint, const net::HttpError& error,
                              unsigned status) {
  if (error || status >= 500) {
    pool.failed(endpoint);
  } else {
    pool.succeeded(endpoint);
  }
}

void RouteProxy::Impl::ended(const std::shared_ptr<Forward>& fwd, const std::string& name,
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
    store_answer(*fwd, name);
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
void RouteProxy::Impl::fail_over(const std::shared_ptr<Forward>& fwd, const std::string& name,
                                 bool sent, const net::HttpError& error) {
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
                 fmt::format("Upstream '{}' {}: {}", name, gateway_timeout ? "timed out" : "failed",
                             error.message),
                 "server_error", gateway_timeout ? "upstream_timeout" : "upstream_unavailable",
                 std::move(headers));
  done(fwd);
}

}  // namespace mcpclass::route