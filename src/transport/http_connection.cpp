// One HTTP/1.1 connection: reads requests, routes them (Streamable HTTP, legacy SSE, router
// dialects, health, metrics), and writes JSON responses or SSE streams. Everything a connection
// does runs on its strand; engine threads reach it by posting through the PostGate.
#include "mcpclass/jsonrpc/message.hpp"
#include "mcpclass/protocol/version.hpp"
#include "mcpclass/server/session.hpp"
#include "transport/http_guard.hpp"
#include "transport/http_router_dialect.hpp"
#include "transport/http_shared.hpp"
#include "transport/http_sse.hpp"

#include <boost/asio/dispatch.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>

#include <fmt/format.h>

#include <deque>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace mcpclass::transport {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace json = boost::json;
using tcp = net::ip::tcp;

namespace {

using Clock = std::chrono::steady_clock;
using Headers = std::vector<std::pair<std::string, std::string>>;

constexpr std::string_view kSessionHeader = "Mcp-Session-Id";
constexpr std::string_view kVersionHeader = "MCP-Protocol-Version";
constexpr std::size_t kMaxQueuedBytes = 8 * 1024 * 1024;

std::string rpc_error_body(int code, std::string message) {
  return json::serialize(jsonrpc::make_error(std::nullopt, {code, std::move(message)}));
}

std::string chunk(std::string_view data) {
  std::string out = fmt::format("{:x}\r\n", data.size());
  out.append(data).append("\r\n");
  return out;
}

bool lists_event_stream(std::string_view accept) {
  std::string lower(accept);
  for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower.find("text/event-stream") != std::string::npos;
}

bool is_error_message(const std::optional<json::value>& m) {
  if (!m) return false;
  if (const auto* o = m->if_object()) return o->contains("error");
  if (const auto* a = m->if_array()) {
    for (const auto& item : *a) {
      if (item.is_object() && item.get_object().contains("error")) return true;
    }
  }
  return false;
}

// Whether a parsed body carries at least one request (something that gets an answer).
bool has_request(const json::value& v) {
  auto one = [](const json::value& m) {
    const auto* o = m.if_object();
    if (!o) return true;  // invalid messages are answered with an error
    const auto* id = o->if_contains("id");
    return o->contains("method") && id && !id->is_null();
  };
  if (const auto* a = v.if_array()) {
    for (const auto& item : *a) {
      if (one(item)) return true;
    }
    return a->empty();
  }
  return one(v);
}

std::string method_of(const json::value& v) {
  if (const auto* o = v.if_object()) {
    if (const auto* m = o->if_contains("method"); m && m->is_string()) {
      return std::string(m->get_string());
    }
    return "response";
  }
  return v.is_array() ? "batch" : "invalid";
}

class Connection;

// Counts a request for draining and keeps its session from being evicted while it runs.
class RequestGuard {
 public:
  RequestGuard(HttpShared& shared, std::shared_ptr<HttpSession> entry)
      : shared_(shared), entry_(std::move(entry)) {
    shared_.begin_request();
    if (entry_) entry_->begin();
  }
  ~RequestGuard() {
    if (entry_) entry_->end();
    shared_.end_request();
  }
  RequestGuard(const RequestGuard&) = delete;
  RequestGuard& operator=(const RequestGuard&) = delete;

 private:
  HttpShared& shared_;
  std::shared_ptr<HttpSession> entry_;
};

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(tcp::socket socket, std::shared_ptr<HttpShared> shared)
      : stream_(std::move(socket)), shared_(std::move(shared)) {}

  ~Connection() {
    if (stream_counted_) shared_->metrics->stream_closed();
    release_reading();
  }

  void start() {
    net::dispatch(stream_.get_executor(),
                  beast::bind_front_handler(&Connection::do_read, shared_from_this()));
  }

  // --- Called on the strand by the engine's streams (through the gate). ---

  // The POST's answer without SSE: a JSON body, or 202 when there is nothing to say.
  void on_final(std::uint64_t exchange, std::optional<json::value> final_message) {
    if (exchange != exchange_ || mode_ != Mode::waiting) return;
    Headers headers;
    if (init_entry_) {
      const bool ok = final_message && final_message->is_object() &&
                      final_message->get_object().contains("result");
      if (ok) {
        headers.emplace_back(kSessionHeader, init_entry_->id);
      } else {
        shared_->sessions->remove(init_entry_->id);
        init_entry_.reset();
      }
    }
    if (!final_message) return respond(http::status::accepted, {}, {}, std::move(headers));
    respond(http::status::ok, json::serialize(*final_message), "application/json",
            std::move(headers));
  }

  // The router dialect's answer.
  void on_router_final(std::uint64_t exchange, std::optional<json::value> final_message) {
    if (exchange != exchange_ || mode_ != Mode::waiting) return;
    RouterReply reply = router_reply(final_message);
    respond(static_cast<http::status>(reply.status), std::move(reply.body),
            reply.body.empty() ? "" : "application/json");
  }

  // A frame of the SSE stream this exchange writes; the first one switches the POST to SSE.
  void on_frame(std::uint64_t exchange, std::string frame, bool end) {
    if (exchange != exchange_) return;
    if (mode_ == Mode::waiting) {
      if (frame.empty()) return;  // a stream that ends before its first event stays JSON
      start_sse(priming_allowed_);
    }
    if (mode_ != Mode::streaming) return;
    if (!frame.empty()) {
      queued_bytes_ += frame.size();
      if (queued_bytes_ > kMaxQueuedBytes) return disconnect();  // the reader is too slow
      enqueue(chunk(frame), false);
    }
    if (end) {
      mode_ = Mode::writing;
      enqueue("0\r\n\r\n", true);
    }
  }

  // A sink that hands the channel's frames to this exchange on the strand.
  SseChannel::Sink make_sink() {
    // Strong: between writes nothing else keeps the connection alive. The channel drops the sink
    // when it finishes or the connection detaches it.
    return [self = shared_from_this(), gate = shared_->gate, executor = stream_.get_executor(),
            exchange = exchange_](std::string frame, bool end) {
      gate->post(executor, [self, exchange, frame = std::move(frame), end]() mutable {
        self->on_frame(exchange, std::move(frame), end);
      });
    };
  }

  template <class F>
  void post_to_self(F&& f) {
    shared_->gate->post(stream_.get_executor(), std::forward<F>(f));
  }

  std::uint64_t exchange() const { return exchange_; }

 private:
  enum class Mode { reading, waiting, streaming, writing, closed };

  // --- Reading ---

  void do_read() {
    if (mode_ == Mode::closed) return;
    mode_ = Mode::reading;
    parser_.emplace();
    parser_->body_limit(shared_->options.max_body_bytes);
    parser_->header_limit(static_cast<std::uint32_t>(shared_->options.max_header_bytes));
    stream_.expires_after(first_request_ ? shared_->options.read_timeout
                                         : shared_->options.idle_timeout);
    http::async_read_header(stream_, buffer_, *parser_,
                            beast::bind_front_handler(&Connection::on_header, shared_from_this()));
  }

  void on_header(beast::error_code ec, std::size_t) {
    if (ec) return on_read_error(ec);
    // From its headers on, a request counts as in flight: a drain that starts while its body is
    // still arriving waits for it and answers it instead of resetting the connection.
    shared_->begin_request();
    reading_counted_ = true;
    admitted_before_stop_ = !shared_->stopping;
    first_request_ = false;
    start_ = Clock::now();
    stream_.expires_after(shared_->options.read_timeout);
    http::async_read(stream_, buffer_, *parser_,
                     beast::bind_front_handler(&Connection::on_read, shared_from_this()));
  }

  void on_read(beast::error_code ec, std::size_t) {
    if (ec) {
      release_reading();
      return on_read_error(ec);
    }
    stream_.expires_never();
    ++exchange_;
    route_ = "other";
    handle(parser_->release());
    // After handle(): a request it keeps running holds its own count, so the drain never sees
    // zero in between.
    release_reading();
  }

  void release_reading() {
    if (!reading_counted_) return;
    reading_counted_ = false;
    shared_->end_request();
  }

  void on_read_error(beast::error_code ec) {
    if (mode_ == Mode::closed) return;
    keep_alive_ = false;
    route_ = "other";
    if (ec == http::error::body_limit) {
      return respond(http::status::payload_too_large,
                     rpc_error_body(jsonrpc::kInvalidRequest,
                                    fmt::format("Payload Too Large: the body exceeds {} bytes",
                                                shared_->options.max_body_bytes)));
    }
    if (ec == http::error::header_limit) {
      return respond(http::status::request_header_fields_too_large,
                     rpc_error_body(jsonrpc::kInvalidRequest, "Request Header Fields Too Large"));
    }
    if (ec == http::error::end_of_stream || ec == beast::error::timeout || ec == net::error::eof ||
        ec == net::error::connection_reset || ec == net::error::operation_aborted ||
        ec == http::error::partial_message) {
      return disconnect();
    }
    respond(http::status::bad_request,
            rpc_error_body(jsonrpc::kInvalidRequest, "Bad Request: " + ec.message()));
  }

  // --- Routing ---

  void handle(http::request<http::string_body> req) {
    keep_alive_ = req.keep_alive();
    const std::string_view target = req.target();
    const std::string_view path = target.substr(0, target.find('?'));
    const std::string_view query =
        target.find('?') == std::string_view::npos ? "" : target.substr(target.find('?') + 1);
    const auto verb = req.method();

    if (shared_->stopping && !admitted_before_stop_) {
      keep_alive_ = false;
      return respond(http::status::service_unavailable,
                     rpc_error_body(jsonrpc::kInternalError, "Service Unavailable: shutting down"));
    }
    if (path == "/health") {
      route_ = "health";
      if (verb != http::verb::get) return method_not_allowed("GET");
      return health();
    }
    const bool mcp = path == "/mcp" || path.starts_with("/mcp/");
    const bool legacy = path == "/sse" || path == "/messages";
    if (path == "/metrics") {
      route_ = "metrics";
    } else if (mcp) {
      route_ = path == "/mcp" ? "mcp" : "router";
    } else if (legacy) {
      route_ = "sse";
    } else {
      return respond(http::status::not_found, R"({"error":"not found"})");
    }

    // DNS rebinding: only local (or configured) Host and Origin values reach the server.
    if (!host_allowed(req[http::field::host], shared_->options.allowed_hosts)) {
      return respond(http::status::forbidden,
                     rpc_error_body(jsonrpc::kInvalidRequest, "Forbidden: Host not allowed"));
    }
    if (!origin_allowed(req[http::field::origin], shared_->options.allowed_origins)) {
      return respond(http::status::forbidden,
                     rpc_error_body(jsonrpc::kInvalidRequest, "Forbidden: Origin not allowed"));
    }
    if (!shared_->options.bearer_token.empty() &&
        !bearer_matches(req[http::field::authorization], shared_->options.bearer_token)) {
      const bool given = !req[http::field::authorization].empty();
      return respond(
          http::status::unauthorized,
          rpc_error_body(jsonrpc::kInvalidRequest,
                         "Unauthorized: a valid bearer token is required"),
          "application/json",
          {{"WWW-Authenticate", given ? R"(Bearer realm="mcpclass", error="invalid_token")"
                                      : R"(Bearer realm="mcpclass")"}});
    }

    if (path == "/metrics") {
      if (verb != http::verb::get) return method_not_allowed("GET");
      std::string text = shared_->metrics->render(shared_->sessions->size());
      if (shared_->options.extra_metrics) text += shared_->options.extra_metrics();
      return respond(http::status::ok, std::move(text), "text/plain; version=0.0.4");
    }
    if (path == "/mcp") {
      if (verb == http::verb::post) return post_mcp(req);
      if (shared_->options.stateless) return method_not_allowed("POST");
      if (verb == http::verb::get) return get_mcp(req);
      if (verb == http::verb::delete_) return delete_mcp(req);
      return method_not_allowed("GET, POST, DELETE");
    }
    if (mcp) {
      if (verb != http::verb::post) return method_not_allowed("POST");
      return post_router(req, path.substr(5));
    }
    if (path == "/sse") {
      if (verb != http::verb::get) return method_not_allowed("GET");
      return get_legacy();
    }
    if (verb != http::verb::post) return method_not_allowed("POST");
    post_legacy(req, query);
  }

  void method_not_allowed(std::string allow) {
    respond(http::status::method_not_allowed,
            rpc_error_body(jsonrpc::kInvalidRequest, "Method Not Allowed"), "application/json",
            {{"Allow", std::move(allow)}});
  }

  void health() {
    json::object body{{"status", "ok"}};
    if (shared_->health) {
      for (auto& [k, v] : shared_->health()) body[k] = v;
    }
    auto add = [&](std::string_view key, json::value v) {
      if (!body.contains(key)) body[key] = std::move(v);
    };
    add("tools", shared_->server->tool_count());
    json::array transports{"streamable-http", "sse", "rest"};
    add("transports", std::move(transports));
    add("mode", shared_->options.stateless ? "stateless" : "stateful");
    add("sessions", shared_->sessions->size());
    add("uptime_seconds", std::chrono::duration<double>(Clock::now() - shared_->started).count());
    respond(http::status::ok, json::serialize(body));
  }

  // Checks Content-Type and MCP-Protocol-Version, parses the body. Responds and returns nullopt
  // when the request is refused.
  std::optional<json::value> read_rpc_body(const http::request<http::string_body>& req) {
    if (!media_type_is(req[http::field::content_type], "application/json")) {
      respond(http::status::unsupported_media_type,
              rpc_error_body(jsonrpc::kInvalidRequest,
                             "Unsupported Media Type: Content-Type must be application/json"));
      return std::nullopt;
    }
    const std::string_view version = req[kVersionHeader];
    if (!version.empty() && !protocol::is_supported_version(version)) {
      respond(http::status::bad_request,
              rpc_error_body(jsonrpc::kInvalidRequest,
                             fmt::format("Bad Request: unsupported MCP-Protocol-Version {}",
                                         std::string(version))));
      return std::nullopt;
    }
    auto parsed = jsonrpc::parse_json(req.body(), shared_->server->options().limits);
    if (auto* error = std::get_if<jsonrpc::Error>(&parsed)) {
      respond(http::status::bad_request,
              json::serialize(jsonrpc::make_error(std::nullopt, std::move(*error))));
      return std::nullopt;
    }
    return std::move(std::get<json::value>(parsed));
  }

  // Looks up the session a request names; responds 400/404 and returns nullptr when it cannot.
  std::shared_ptr<HttpSession> find_session(std::string_view id) {
    if (id.empty()) {
      respond(http::status::bad_request,
              rpc_error_body(jsonrpc::kInvalidRequest,
                             "Bad Request: Mcp-Session-Id header is required"));
      return nullptr;
    }
    auto entry = shared_->sessions->find(std::string(id));
    if (!entry || entry->legacy) {
      respond(http::status::not_found,
              rpc_error_body(jsonrpc::kInvalidRequest, "Session not found"));
      return nullptr;
    }
    return entry;
  }

  void post_mcp(const http::request<http::string_body>& req);
  void post_router(const http::request<http::string_body>& req, std::string_view method);
  void post_legacy(const http::request<http::string_body>& req, std::string_view query);

  void get_mcp(const http::request<http::string_body>& req) {
    if (!lists_event_stream(req[http::field::accept])) {
      return respond(http::status::not_acceptable,
                     rpc_error_body(jsonrpc::kInvalidRequest,
                                    "Not Acceptable: Accept must include text/event-stream"));
    }
    auto entry = find_session(req[kSessionHeader]);
    if (!entry) return;
    std::shared_ptr<SseChannel> channel = entry->standalone;
    std::optional<std::uint64_t> after;
    if (const std::string_view last = req["Last-Event-ID"]; !last.empty()) {
      auto parsed = parse_event_id(last);
      channel = parsed ? entry->find_channel(parsed->first) : nullptr;
      if (!channel) {
        return respond(http::status::not_found,
                       rpc_error_body(jsonrpc::kInvalidRequest,
                                      "Not Found: no stream with that Last-Event-ID"));
      }
      after = parsed->second;
    }
    if (!open_stream_slot()) return;
    guard_.reset();
    channel_ = channel;
    priming_ = channel->priming_frame(shared_->options.sse_retry_ms);
    start_sse(entry->session->protocol_version() >= protocol::k2025_11_25);
    sink_token_ = channel->attach(make_sink(), after);
    watch_disconnect();
  }

  void delete_mcp(const http::request<http::string_body>& req) {
    const std::string_view id = req[kSessionHeader];
    if (!find_session(id)) return;
    shared_->sessions->remove(std::string(id));
    respond(http::status::ok, {});
  }

  void get_legacy() {
    if (!open_stream_slot()) return;
    auto entry = shared_->sessions->create(true);
    if (!entry) {
      return respond(
          http::status::service_unavailable,
          rpc_error_body(jsonrpc::kInternalError, "Service Unavailable: too many sessions"));
    }
    legacy_entry_ = entry;
    channel_ = entry->standalone;
    start_sse(false);
    sink_token_ = channel_->attach(make_sink(), std::nullopt);
    channel_->append_raw("endpoint", "/messages?sessionId=" + entry->id);
    watch_disconnect();
  }

  bool open_stream_slot() {
    if (static_cast<std::size_t>(shared_->metrics->sse_streams()) >=
        shared_->options.max_sse_streams) {
      respond(http::status::service_unavailable,
              rpc_error_body(jsonrpc::kInternalError, "Service Unavailable: too many SSE streams"));
      return false;
    }
    shared_->metrics->stream_opened();
    stream_counted_ = true;
    get_stream_ = true;
    keep_alive_ = false;  // a GET stream ends with its connection
    return true;
  }

  // Writes the SSE response head (and the priming event of resumable streams).
  void start_sse(bool priming) {
    http::response<http::empty_body> res{http::status::ok, 11};
    res.set(http::field::server, "mcpclass");
    res.set(http::field::content_type, "text/event-stream");
    res.set(http::field::cache_control, "no-cache");
    if (init_entry_) res.set(kSessionHeader, init_entry_->id);
    res.keep_alive(keep_alive_);
    res.chunked(true);
    std::ostringstream os;
    os << res.base();
    status_ = 200;
    mode_ = Mode::streaming;
    enqueue(os.str(), false);
    if (priming && !priming_.empty()) enqueue(chunk(priming_), false);
  }

  // GET streams only write; a read that fails tells us the client went away.
  void watch_disconnect() {
    stream_.async_read_some(buffer_.prepare(1024),
                            [self = shared_from_this()](beast::error_code ec, std::size_t n) {
                              if (ec) return self->disconnect();
                              self->buffer_.commit(n);
                              self->buffer_.clear();
                              self->watch_disconnect();
                            });
  }

  // --- Writing ---

  void respond(http::status status, std::string body,
               std::string_view content_type = "application/json", Headers headers = {}) {
    http::response<http::empty_body> res{status, 11};
    res.set(http::field::server, "mcpclass");
    if (!body.empty()) res.set(http::field::content_type, content_type);
    for (auto& [name, value] : headers) res.set(name, value);
    res.keep_alive(keep_alive_ && !shared_->stopping);
    res.content_length(body.size());
    std::ostringstream os;
    os << res.base();
    std::string bytes = os.str();
    bytes += body;
    status_ = static_cast<unsigned>(status);
    mode_ = Mode::writing;
    enqueue(std::move(bytes), true);
  }

  void enqueue(std::string bytes, bool last) {
    // Counted when the last bytes are queued, not when the kernel took them: a client that has
    // its answer then finds it in /metrics.
    if (last) {
      shared_->metrics->record_http(route_, status_,
                                    std::chrono::duration<double>(Clock::now() - start_).count());
    }
    queue_.push_back({std::move(bytes), last});
    if (!writing_) write_next();
  }

  void write_next() {
    if (queue_.empty() || mode_ == Mode::closed) {
      writing_ = false;
      return;
    }
    writing_ = true;
    if (get_stream_ || mode_ == Mode::streaming) {
      stream_.expires_never();
    } else {
      stream_.expires_after(shared_->options.read_timeout);
    }
    net::async_write(stream_, net::buffer(queue_.front().bytes),
                     beast::bind_front_handler(&Connection::on_write, shared_from_this()));
  }

  void on_write(beast::error_code ec, std::size_t n) {
    if (ec || mode_ == Mode::closed) {
      // The buffer this write used is released only now that the write is over.
      writing_ = false;
      queue_.clear();
      return disconnect();
    }
    queued_bytes_ = queued_bytes_ > n ? queued_bytes_ - n : 0;
    const bool last = queue_.front().last;
    queue_.pop_front();
    if (last) {
      writing_ = false;
      return on_response_complete();
    }
    write_next();
  }

  void on_response_complete() {
    release_exchange();
    if (get_stream_) return disconnect();
    if (!keep_alive_ || shared_->stopping) return graceful_close();
    do_read();
  }

  // Lets go of what the finished exchange held.
  void release_exchange() {
    if (channel_ && sink_token_ != 0) channel_->detach(sink_token_);
    channel_.reset();
    sink_token_ = 0;
    init_entry_.reset();
    guard_.reset();
    queued_bytes_ = 0;
    priming_allowed_ = false;
    priming_.clear();
    if (legacy_entry_) {
      shared_->sessions->remove(legacy_entry_->id);
      legacy_entry_.reset();
    }
  }

  // Sends FIN, then reads (and drops) what the client still sends, so it sees our answer rather
  // than a reset; gives up after a second.
  void graceful_close() {
    mode_ = Mode::closed;
    beast::error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
    stream_.expires_after(std::chrono::seconds(1));
    drain();
  }

  void drain() {
    stream_.async_read_some(buffer_.prepare(4096),
                            [self = shared_from_this()](beast::error_code ec, std::size_t n) {
                              if (ec) {
                                beast::error_code ignored;
                                self->stream_.socket().close(ignored);
                                return;
                              }
                              self->buffer_.commit(n);
                              self->buffer_.clear();
                              self->drain();
                            });
  }

  void disconnect() {
    if (mode_ == Mode::closed) return;
    mode_ = Mode::closed;
    release_exchange();
    // A write in progress still reads queue_.front(): keep that buffer until on_write.
    if (writing_ && !queue_.empty()) {
      queue_.erase(std::next(queue_.begin()), queue_.end());
    } else {
      queue_.clear();
    }
    beast::error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ec);
    stream_.socket().close(ec);
  }

  struct Out {
    std::string bytes;
    bool last;
  };

  beast::tcp_stream stream_;
  std::shared_ptr<HttpShared> shared_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  Mode mode_ = Mode::reading;
  bool first_request_ = true;
  bool reading_counted_ = false;       // this request holds a drain count while it is read
  bool admitted_before_stop_ = false;  // its headers arrived before the drain began
  bool keep_alive_ = true;
  bool writing_ = false;
  std::deque<Out> queue_;
  std::size_t queued_bytes_ = 0;

  // The exchange being served.
  std::uint64_t exchange_ = 0;
  Clock::time_point start_ = Clock::now();
  std::string route_ = "other";
  unsigned status_ = 0;
  std::optional<RequestGuard> guard_;
  std::shared_ptr<SseChannel> channel_;
  std::uint64_t sink_token_ = 0;
  std::shared_ptr<HttpSession> init_entry_;
  std::shared_ptr<HttpSession> legacy_entry_;
  bool priming_allowed_ = false;
  std::string priming_;  // the priming event of this exchange's resumable stream
  bool get_stream_ = false;
  bool stream_counted_ = false;
};

// The engine's view of one POST /mcp: events go to the POST's SSE channel (the connection switches
// to SSE on the first one), the final message is the JSON body or the stream's last event.
class PostStream final : public server::Stream {
 public:
  // `sse_only`: the client does not accept JSON, so even a lone answer goes out as an SSE event.
  PostStream(std::shared_ptr<Connection> connection, std::shared_ptr<SseChannel> channel,
             std::shared_ptr<SseChannel> fallback, std::function<void(bool error)> on_close,
             bool sse_only)
      : connection_(connection),
        exchange_(connection->exchange()),
        channel_(std::move(channel)),
        fallback_(std::move(fallback)),
        on_close_(std::move(on_close)),
        started_(sse_only && channel_ != nullptr) {}

  void send(json::value message) override {
    std::shared_ptr<SseChannel> target;
    {
      std::lock_guard lock(mutex_);
      if (closed_) return;
      if (channel_) started_ = true;
      target = channel_ ? channel_ : fallback_;
    }
    if (target) target->append(message);
  }

  void close(std::optional<json::value> final_message) override {
    bool started = false;
    {
      std::lock_guard lock(mutex_);
      if (closed_) return;
      closed_ = true;
      started = started_;
    }
    if (on_close_) on_close_(is_error_message(final_message));
    if (started) {
      channel_->finish(std::move(final_message));
      std::lock_guard lock(mutex_);
      connection_.reset();
      return;
    }
    if (channel_) channel_->finish();
    std::shared_ptr<Connection> connection;
    {
      std::lock_guard lock(mutex_);
      connection = std::move(connection_);
    }
    if (connection) {
      connection->post_to_self(
          [connection, exchange = exchange_, final_message = std::move(final_message)]() mutable {
            connection->on_final(exchange, std::move(final_message));
          });
    }
  }

 private:
  // Strong until close: while the engine works nothing else keeps the connection alive.
  std::shared_ptr<Connection> connection_;
  const std::uint64_t exchange_;
  std::shared_ptr<SseChannel> channel_;
  std::shared_ptr<SseChannel> fallback_;
  std::function<void(bool)> on_close_;
  std::mutex mutex_;
  bool started_ = false;
  bool closed_ = false;
};

// The engine's view of a router-dialect request: only the final message matters.
class RouterStream final : public server::Stream {
 public:
  RouterStream(std::shared_ptr<Connection> connection, std::function<void(bool)> on_close)
      : connection_(connection),
        exchange_(connection->exchange()),
        on_close_(std::move(on_close)) {}

  void send(json::value) override {}  // no channel for progress or client requests

  void close(std::optional<json::value> final_message) override {
    if (closed_.exchange(true)) return;
    if (on_close_) on_close_(is_error_message(final_message));
    if (auto connection = std::move(connection_)) {
      connection->post_to_self(
          [connection, exchange = exchange_, final_message = std::move(final_message)]() mutable {
            connection->on_router_final(exchange, std::move(final_message));
          });
    }
  }

 private:
  std::shared_ptr<Connection> connection_;  // strong until close, as in PostStream
  const std::uint64_t exchange_;
  std::function<void(bool)> on_close_;
  std::atomic<bool> closed_{false};
};

// The engine's view of a legacy POST /messages: everything goes out on the session's GET /sse.
class LegacyStream final : public server::Stream {
 public:
  explicit LegacyStream(std::shared_ptr<SseChannel> channel) : channel_(std::move(channel)) {}
  void send(json::value message) override { channel_->append(message); }
  void close(std::optional<json::value> final_message) override {
    if (final_message) channel_->append(*final_message);
  }

 private:
  std::shared_ptr<SseChannel> channel_;
};

void Connection::post_mcp(const http::request<http::string_body>& req) {
  auto body = read_rpc_body(req);
  if (!body) return;
  const json::value& message = *body;
  const json::object* object = message.if_object();
  const json::value* method = object ? object->if_contains("method") : nullptr;
  const bool initialize = method && method->is_string() && method->get_string() == "initialize";
  const bool answers = has_request(message);
  const bool sse_ok = lists_event_stream(req[http::field::accept]);
  // initialize stays JSON: on_final() attaches or drops the new session with its answer.
  const bool sse_only =
      sse_ok && !initialize && !accepts(req[http::field::accept], "application/json");
  const std::string method_name = method_of(message);
  std::string version(req[kVersionHeader]);

  auto metrics = shared_->metrics;
  std::shared_ptr<server::Session> session;
  std::shared_ptr<SseChannel> channel;
  std::shared_ptr<SseChannel> fallback;
  std::function<void(bool)> on_close;

  if (shared_->options.stateless) {
    server::SessionOptions options;
    options.require_initialize = initialize;
    if (protocol::is_handshake_version(version)) options.assumed_version = version;
    session = shared_->server->create_session(options);
    shared_->sessions->add_transient(session);
    guard_.emplace(*shared_, nullptr);
    if (sse_ok && answers) channel = std::make_shared<SseChannel>("s", false, 1);
    on_close = [metrics, answers, method_name, sessions = shared_->sessions,
                weak = std::weak_ptr<server::Session>(session)](bool error) {
      if (answers) metrics->record_rpc(method_name, error);
      if (auto s = weak.lock()) sessions->remove_transient(s);
    };
  } else {
    std::shared_ptr<HttpSession> entry;
    if (initialize) {
      entry = shared_->sessions->create(false);
      if (!entry) {
        return respond(
            http::status::service_unavailable,
            rpc_error_body(jsonrpc::kInternalError, "Service Unavailable: too many sessions"));
      }
      init_entry_ = entry;
    } else {
      entry = find_session(req[kSessionHeader]);
      if (!entry) return;
    }
    session = entry->session;
    guard_.emplace(*shared_, entry);
    priming_allowed_ = initialize ? false : session->protocol_version() >= protocol::k2025_11_25;
    if (sse_ok && answers) channel = entry->open_channel(shared_->options.event_store_size);
    fallback = entry->standalone;
    on_close = [metrics, answers, method_name](bool error) {
      if (answers) metrics->record_rpc(method_name, error);
    };
  }

  channel_ = channel;
  if (channel) {
    // Before the engine runs: the priming event's id must precede every event of the stream.
    priming_ = channel->resumable() ? channel->priming_frame(shared_->options.sse_retry_ms) : "";
    sink_token_ = channel->attach(make_sink(), std::nullopt);
  }
  mode_ = Mode::waiting;
  auto stream =
      std::make_shared<PostStream>(shared_from_this(), channel, fallback, on_close, sse_only);
  try {
    session->handle(message, stream);
  } catch (const std::exception& e) {
    stream->close(jsonrpc::make_error(std::nullopt, {jsonrpc::kInternalError, e.what()}));
  }
}

void Connection::post_router(const http::request<http::string_body>& req, std::string_view method) {
  if (method.empty()) return respond(http::status::not_found, R"({"error":"not found"})");
  auto built = router_request(method, req.body());
  if (auto* reply = std::get_if<RouterReply>(&built)) {
    return respond(static_cast<http::status>(reply->status), std::move(reply->body));
  }
  const json::value& message = std::get<json::value>(built);
  auto metrics = shared_->metrics;
  const std::string method_name(method);
  const bool answers = has_request(message);

  // A known Mcp-Session-Id keeps the router's calls in that session; otherwise each call is
  // served by a throwaway session that needs no handshake.
  std::shared_ptr<server::Session> session;
  std::function<void(bool)> on_close;
  std::shared_ptr<HttpSession> entry;
  if (const std::string_view id = req[kSessionHeader]; !id.empty() && !shared_->options.stateless) {
    entry = shared_->sessions->find(std::string(id));
  }
  if (entry) {
    session = entry->session;
    on_close = [metrics, method_name, answers](bool error) {
      if (answers) metrics->record_rpc(method_name, error);
    };
  } else {
    server::SessionOptions options;
    options.require_initialize = method == "initialize";
    options.assumed_version = std::string(protocol::kFallbackVersion);
    session = shared_->server->create_session(options);
    shared_->sessions->add_transient(session);
    on_close = [metrics, method_name, answers, sessions = shared_->sessions,
                weak = std::weak_ptr<server::Session>(session)](bool error) {
      if (answers) metrics->record_rpc(method_name, error);
      if (auto s = weak.lock()) sessions->remove_transient(s);
    };
  }
  guard_.emplace(*shared_, entry);
  mode_ = Mode::waiting;
  auto stream = std::make_shared<RouterStream>(shared_from_this(), on_close);
  try {
    session->handle(message, stream);
  } catch (const std::exception& e) {
    stream->close(jsonrpc::make_error(std::nullopt, {jsonrpc::kInternalError, e.what()}));
  }
}

void Connection::post_legacy(const http::request<http::string_body>& req, std::string_view query) {
  std::string id;
  if (query.starts_with("sessionId=")) id = std::string(query.substr(10, query.find('&') - 10));
  if (const auto pos = query.find("&sessionId="); id.empty() && pos != std::string_view::npos) {
    const auto rest = query.substr(pos + 11);
    id = std::string(rest.substr(0, rest.find('&')));
  }
  if (id.empty()) {
    return respond(http::status::bad_request,
                   rpc_error_body(jsonrpc::kInvalidRequest, "Bad Request: sessionId is required"));
  }
  auto entry = shared_->sessions->find(id);
  if (!entry || !entry->legacy) {
    return respond(http::status::not_found,
                   rpc_error_body(jsonrpc::kInvalidRequest, "Session not found"));
  }
  auto body = read_rpc_body(req);
  if (!body) return;
  if (has_request(*body)) shared_->metrics->record_rpc(method_of(*body), false);
  try {
    entry->session->handle(*body, std::make_shared<LegacyStream>(entry->standalone));
  } catch (const std::exception&) {
    // The engine answers on the stream; nothing else to do here.
  }
  respond(http::status::accepted, "Accepted", "text/plain");
}

}  // namespace

void serve_connection(tcp::socket socket, std::shared_ptr<HttpShared> shared) {
  // An SSE answer is several small writes (head, events, last chunk); with Nagle's algorithm the
  // second waits for the client's delayed ACK, ~40 ms per answer.
  boost::system::error_code ignored;
  socket.set_option(tcp::no_delay(true), ignored);
  std::make_shared<Connection>(std::move(socket), std::move(shared))->start();
}

}  // namespace mcpclass::transport
