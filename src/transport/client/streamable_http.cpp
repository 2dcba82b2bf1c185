// Streamable HTTP, client side: one POST per message, JSON or SSE answers, the GET stream,
// resumption with Last-Event-ID, DELETE on close.
#include "mcpclass/client/errors.hpp"
#include "mcpclass/protocol/version.hpp"
#include "net/sse_parser.hpp"
#include "transport/client/http_common.hpp"
#include "transport/client/http_transport.hpp"
#include "util/excerpt.hpp"

#include <fmt/format.h>

#include <atomic>
#include <mutex>

namespace mcpclass::transport::client {

namespace {

namespace json = boost::json;
using mcpclass::client::TransportError;
using net::HttpError;
using net::HttpFailure;
using net::HttpHead;
using net::HttpRequest;

/// One request's answer stream: the POST, then any GETs resuming it.
struct RequestStream {
  jsonrpc::Id id;
  std::string key;
  net::SseParser parser;
  std::optional<std::string> last_event_id;
  std::optional<long> retry_ms;
  int status = 0;
  bool sse = false;
  bool answered = false;
  int attempts = 0;
  std::string body;
  HttpRequest request;  // the POST, sent again after an authorization flow
  std::string sent_authorization;
  std::string www_authenticate;
  int auth_attempts = 0;
};

class StreamableHttpTransport : public detail::HttpClientTransportBase,
                                public std::enable_shared_from_this<StreamableHttpTransport> {
 public:
  using HttpClientTransportBase::HttpClientTransportBase;
  ~StreamableHttpTransport() override { close(); }

  void start(mcpclass::client::TransportHandlers handlers) override {
    close();
    {
      std::lock_guard lock(mutex_);
      session_.clear();
      version_.clear();
    }
    open_engine(std::move(handlers));
  }

  void send(const json::value& message) override {
    renew_expired_token();
    const auto kind = detail::kind_of(message);
    HttpRequest req = base_request("POST");
    req.headers.emplace_back("Content-Type", "application/json");
    req.headers.emplace_back("Accept", "application/json, text/event-stream");
    detail::add_trace_headers(req, message);
    if (stateless_era() && !kind.method.empty()) add_stateless_headers(req, kind.method, message);
    req.body = json::serialize(message);
    std::lock_guard lock(mutex_);
    if (!open_) throw TransportError(describe() + ": closed");
    if (kind.request_id) {
      auto stream = std::make_shared<RequestStream>();
      stream->id = *kind.request_id;
      stream->key = jsonrpc::id_key(*kind.request_id);
      stream->request = req;
      start_request_stream(stream, std::move(req));
    } else {
      req.timeout = options_.io_timeout;
      start_fire_and_forget(std::move(req), kind.method.empty() ? "response" : kind.method);
      if (kind.method == "notifications/initialized" && options_.open_get_stream)
        start_get_stream(0);
    }
  }

  void close() override {
    const std::string bearer = authorization();
    std::string session;
    {
      std::lock_guard lock(mutex_);
      session = session_;
    }
    auto engine = take_engine();
    if (!engine) return;
    if (!session.empty()) {
      HttpRequest del;
      del.method = "DELETE";
      del.target = url_.target;
      del.headers = headers_;
      del.headers.emplace_back("Mcp-Session-Id", session);
      if (!version_.empty()) del.headers.emplace_back("MCP-Protocol-Version", version_);
      if (!bearer.empty()) del.headers.emplace_back("Authorization", bearer);
      del.timeout = std::min(options_.io_timeout, std::chrono::milliseconds{2'000});
      auto r = engine->perform(url_, std::move(del));  // 400/404/405 are all fine
      if (r.error) log(fmt::format("DELETE session: {}", r.error.message));
    }
    engine->stop();
  }

  void set_protocol_version(std::string_view version) override {
    std::lock_guard lock(mutex_);
    version_ = version;
  }

 private:
  bool stateless_era() const {
    std::lock_guard lock(mutex_);
    return version_ == protocol::k2026_07_28;
  }

  void log(const std::string& line) const {
    if (handlers_.on_log) handlers_.on_log(line);
  }

  HttpRequest base_request(std::string method) const {
    HttpRequest req;
    req.method = std::move(method);
    req.target = url_.target;
    req.headers = headers_;
    std::lock_guard lock(mutex_);
    if (!session_.empty()) req.headers.emplace_back("Mcp-Session-Id", session_);
    if (!version_.empty()) req.headers.emplace_back("MCP-Protocol-Version", version_);
    return req;
  }

  static void add_stateless_headers(HttpRequest& req, const std::string& method,
                                    const json::value& message) {
    req.headers.emplace_back("Mcp-Method", method);
    const auto* params = message.get_object().if_contains("params");
    if (params == nullptr || !params->is_object()) return;
    const char* key = method == "resources/read" ? "uri" : "name";
    if (method != "tools/call" && method != "prompts/get" && method != "resources/read") return;
    if (const auto* v = params->get_object().if_contains(key); v != nullptr && v->is_string())
      req.headers.emplace_back("Mcp-Name", detail::header_safe(v->get_string()));
  }

  void capture_session(const HttpHead& head) {
    const auto id = head.header("mcp-session-id");
    if (id.empty()) return;
    std::lock_guard lock(mutex_);
    session_ = id;
  }

  bool had_session() const {
    std::lock_guard lock(mutex_);
    return !session_.empty();
  }

  void deliver(const json::value& v) {
    if (handlers_.on_message) handlers_.on_message(v);
  }

  void deliver_event(RequestStream* stream, net::SseEvent event) {
    if (event.type != "message") return;
    auto v = detail::parse_body(event.data);
    if (!v) {
      log(fmt::format("{}: ignored a non-JSON SSE event", describe()));
      return;
    }
    if (stream != nullptr && detail::answers(*v, stream->id)) stream->answered = true;
    deliver(*v);
  }

  void fail(const RequestStream& stream, std::string reason) {
    untrack(stream.key);
    if (handlers_.on_failure) handlers_.on_failure(stream.id, std::move(reason));
  }

  // Must hold mutex_.
  void start_request_stream(const std::shared_ptr<RequestStream>& stream, HttpRequest req) {
    stream->sent_authorization = authorize(req);
    std::weak_ptr<StreamableHttpTransport> weak = weak_from_this();
    net::ExchangeCallbacks cb;
    cb.on_head = [weak, stream](const HttpHead& head) {
      auto self = weak.lock();
      if (!self) return;
      self->capture_session(head);
      stream->status = head.status;
      stream->www_authenticate = head.header("www-authenticate");
      stream->sse = head.header("content-type").starts_with("text/event-stream");
      stream->body.clear();
      stream->parser = net::SseParser(self->options_.max_message_bytes);
    };
    cb.on_data = [weak, stream](std::string_view data) {
      auto self = weak.lock();
      if (!self) return;
      if (stream->sse && stream->status / 100 == 2) {
        stream->parser.feed(data, [&](net::SseEvent e) { self->deliver_event(stream.get(), e); });
        if (stream->parser.last_event_id()) stream->last_event_id = stream->parser.last_event_id();
        if (stream->parser.retry_ms()) stream->retry_ms = stream->parser.retry_ms();
      } else {
        stream->body.append(data);
      }
    };
    cb.on_end = [weak, stream](const HttpError& failure) {
      if (auto self = weak.lock()) self->request_stream_ended(stream, failure);
    };
    track(stream->key, start_exchange(url_, std::move(req), std::move(cb)));
  }

  /// Hands a 401/403 to OAuth; true when it took it (the request is sent again or failed later).
  bool retry_after_authorization(const std::shared_ptr<RequestStream>& stream) {
    std::weak_ptr<StreamableHttpTransport> weak = weak_from_this();
    auto retry = [weak, stream] {
      auto self = weak.lock();
      if (!self || !self->tracked(stream->key)) return;  // closed or abandoned meanwhile
      HttpRequest again = stream->request;
      std::lock_guard lock(self->mutex_);
      if (!self->open_ || !self->engine_) return;
      self->start_request_stream(stream, std::move(again));
    };
    auto fail = [weak, stream](std::exception_ptr error) {
      auto self = weak.lock();
      if (!self || !self->untrack(stream->key)) return;  // closed or abandoned meanwhile
      self->fail_request(stream->id, std::move(error));
    };
    return answer_challenge(stream->status, stream->www_authenticate, stream->sent_authorization,
                            stream->auth_attempts, std::move(retry), std::move(fail));
  }

  void request_stream_ended(const std::shared_ptr<RequestStream>& stream,
                            const HttpError& failure) {
    const std::string& error = failure.message;
    if (!is_open() || !tracked(stream->key)) return;  // closed or abandoned
    if (stream->answered) {
      untrack(stream->key);
      return;
    }
    const int status = stream->status;
    if (status / 100 == 2 && stream->sse) {
      if (stream->last_event_id && stream->attempts < options_.max_resume_attempts) {
        resume(stream);
        return;
      }
      fail(*stream, error.empty() ? "the SSE stream ended without a response" : error);
      return;
    }
    if (!error.empty()) {
      untrack(stream->key);
      fail_exchange(stream->id, failure);
      return;
    }
    if ((status == 401 || status == 403) && retry_after_authorization(stream)) return;
    if (status / 100 == 2) {
      if (status == 202 && stream->body.empty()) return;  // the answer comes on the GET stream
      auto v = detail::parse_body(stream->body);
      if (!v) {
        fail(*stream, fmt::format("HTTP {}: not JSON: {}", status, util::excerpt(stream->body)));
        return;
      }
      untrack(stream->key);
      const bool answered = detail::answers(*v, stream->id);
      deliver(*v);
      if (!answered && handlers_.on_failure)
        handlers_.on_failure(stream->id, "the HTTP answer did not contain the response");
      return;
    }
    // An error status: a JSON-RPC error for this request is the answer; anything else fails it.
    if (auto v = detail::parse_body(stream->body); v && detail::answers(*v, stream->id)) {
      untrack(stream->key);
      deliver(*v);
      if (status == 404 && had_session() && handlers_.on_closed)
        handlers_.on_closed("session expired (HTTP 404)");
      return;
    }
    // A 404 on a session: the server forgot it. Report the closed session before failing the
    // request, so the client is marked disconnected (and fails what else is pending) before the
    // caller wakes up; a caller that retries at once then starts a new session instead of
    // racing this notification with another request on the dead one.
    const auto message = fmt::format("HTTP {}: {}", status, util::excerpt(stream->body));
    if (status == 404 && had_session()) {
      if (handlers_.on_closed) handlers_.on_closed("session expired (HTTP 404)");
      fail(*stream, message);
      return;
    }
    untrack(stream->key);
    fail_request(stream->id,
                 std::make_exception_ptr(mcpclass::client::HttpStatusError(status, message)));
  }

  void resume(const std::shared_ptr<RequestStream>& stream) {
    ++stream->attempts;
    HttpRequest req = base_request("GET");
    req.headers.emplace_back("Accept", "text/event-stream");
    req.headers.emplace_back("Last-Event-ID", *stream->last_event_id);
    req.delay =
        std::chrono::milliseconds(stream->retry_ms.value_or(options_.default_retry.count()));
    stream->status = 0;
    stream->sse = false;
    std::lock_guard lock(mutex_);
    if (!open_ || !engine_) return;
    log(fmt::format("{}: resuming stream after event {} in {} ms", describe(),
                    *stream->last_event_id, req.delay.count()));
    start_request_stream(stream, std::move(req));
  }

  // Must hold mutex_.
  void start_fire_and_forget(HttpRequest req, std::string what) {
    authorize(req);
    std::weak_ptr<StreamableHttpTransport> weak = weak_from_this();
    auto status = std::make_shared<int>(0);
    net::ExchangeCallbacks cb;
    cb.on_head = [weak, status](const HttpHead& head) {
      *status = head.status;
      if (auto self = weak.lock()) self->capture_session(head);
    };
    // Bodies are ignored: some servers answer a notification with 200 and a JSON object.
    cb.on_end = [weak, status, what](const HttpError& failure) {
      const std::string& error = failure.message;
      auto self = weak.lock();
      if (!self || failure.kind == HttpFailure::cancelled) return;
      if (!error.empty())
        self->log(fmt::format("{}: sending {} failed: {}", self->describe(), what, error));
      else if (*status / 100 != 2)
        self->log(fmt::format("{}: {} answered with HTTP {}", self->describe(), what, *status));
    };
    start_exchange(url_, std::move(req), std::move(cb));
  }

  // Must hold mutex_ (or be the only user).
  void start_get_stream(int failures) {
    if (!engine_ || !open_) return;
    HttpRequest req;
    req.method = "GET";
    req.target = url_.target;
    req.headers = headers_;
    req.headers.emplace_back("Accept", "text/event-stream");
    if (!session_.empty()) req.headers.emplace_back("Mcp-Session-Id", session_);
    if (!version_.empty()) req.headers.emplace_back("MCP-Protocol-Version", version_);
    if (get_last_id_) req.headers.emplace_back("Last-Event-ID", *get_last_id_);
    authorize(req);
    if (failures > 0 || get_last_id_)
      req.delay = std::chrono::milliseconds(get_retry_.value_or(options_.default_retry.count()));
    struct State {
      net::SseParser parser;
      int status = 0;
      bool sse = false;
      bool got_data = false;
    };
    auto state = std::make_shared<State>();
    state->parser = net::SseParser(options_.max_message_bytes);
    std::weak_ptr<StreamableHttpTransport> weak = weak_from_this();
    net::ExchangeCallbacks cb;
    cb.on_head = [state](const HttpHead& head) {
      state->status = head.status;
      state->sse = head.header("content-type").starts_with("text/event-stream");
    };
    cb.on_data = [weak, state](std::string_view data) {
      auto self = weak.lock();
      if (!self || state->status != 200 || !state->sse) return;
      state->got_data = true;
      state->parser.feed(data, [&](net::SseEvent e) { self->deliver_event(nullptr, e); });
      std::lock_guard lock(self->mutex_);
      if (state->parser.last_event_id()) self->get_last_id_ = state->parser.last_event_id();
      if (state->parser.retry_ms()) self->get_retry_ = state->parser.retry_ms();
    };
    cb.on_end = [weak, state, failures](const HttpError& failure) {
      const std::string& error = failure.message;
      auto self = weak.lock();
      if (!self || failure.kind == HttpFailure::cancelled) return;
      if (state->status != 0 && (state->status != 200 || !state->sse)) {
        // 400/404/405: the server offers no GET stream. Not an error.
        self->log(fmt::format("{}: no GET stream (HTTP {})", self->describe(), state->status));
        return;
      }
      const int next = state->got_data ? 0 : failures + 1;
      if (next > 5) {
        self->log(fmt::format("{}: GET stream gave up: {}", self->describe(), error));
        return;
      }
      std::lock_guard lock(self->mutex_);
      self->start_get_stream(next);
    };
    start_exchange(url_, std::move(req), std::move(cb));
  }

  std::string session_;
  std::string version_;
  std::optional<std::string> get_last_id_;
  std::optional<long> get_retry_;
};

}  // namespace

std::shared_ptr<mcpclass::client::ClientTransport> make_streamable_http_transport(
    HttpClientOptions options) {
  return std::make_shared<StreamableHttpTransport>(std::move(options));
}

}  // namespace mcpclass::transport::client
