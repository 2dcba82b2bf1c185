// Internal: one HTTP/1.1 connection of the server. It reads requests, routes them (Streamable
// HTTP, legacy SSE, router dialects, health, metrics), and writes JSON responses or SSE streams.
// Its members are defined by job in connection_*.cpp: reading and closing (connection.cpp),
// dispatch, tokens, Streamable HTTP POST, SSE GET, legacy /sse, router dialect, mounted app, write.
// The stream underneath (plain TCP or TLS) is a ConnectionIo: this code is the same for both.
// Thread-safety: everything a connection does runs on its strand; engine threads reach it by
// posting through the PostGate (post_to_self, make_sink).
#pragma once

#include "transport/server/http/connection_io.hpp"
#include "transport/server/http/shared.hpp"
#include "transport/server/http/sse.hpp"

#include <boost/asio/steady_timer.hpp>
#include <boost/beast/http.hpp>
#include <boost/json/value.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mcpclass::transport {

inline constexpr std::string_view kSessionHeader = "Mcp-Session-Id";
inline constexpr std::string_view kVersionHeader = "MCP-Protocol-Version";
/// SSE bytes queued for a reader that does not keep up before it is disconnected.
inline constexpr std::size_t kMaxQueuedBytes = 8 * 1024 * 1024;

/// One HTTP/1.1 chunk carrying `data`.
std::string chunk(std::string_view data);

// Counts a request for draining and keeps its session from being evicted while it runs.
class RequestGuard {
 public:
  RequestGuard(HttpShared& shared, std::shared_ptr<HttpSession> entry)
      : shared_(shared), entry_(std::move(entry)) {
    shared_.begin_request();
    if (entry_) entry_->begin();
  }
  /// Takes over an entry that HttpSessionTable::acquire() already marked busy.
  struct Adopt {};
  RequestGuard(HttpShared& shared, std::shared_ptr<HttpSession> entry, Adopt)
      : shared_(shared), entry_(std::move(entry)) {
    shared_.begin_request();
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

class AppResponse;

/// A POST's SSE channel and the priming event its stream starts with ("" when not resumable).
struct OpenedChannel {
  std::shared_ptr<SseChannel> channel;
  std::string priming;
};
/// Opens the channel of a POST's stream, from any thread, when the stream needs it.
using ChannelOpener = std::function<OpenedChannel()>;

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  using Clock = std::chrono::steady_clock;
  using Headers = std::vector<std::pair<std::string, std::string>>;
  using Request = boost::beast::http::request<boost::beast::http::string_body>;

  /// `io_owner`: keeps the io_context of `io` alive until this connection is gone (see
  /// serve_connection). `peer`: the client's address (GET streams are limited per address).
  Connection(std::shared_ptr<void> io_owner, std::unique_ptr<ConnectionIo> io,
             std::shared_ptr<HttpShared> shared, boost::asio::ip::address peer);
  ~Connection();

  /// The TLS handshake (if any), then the first request.
  void start();

  // --- Called on the strand by the engine's streams (through the gate). ---

  /// The POST's answer without SSE: a JSON body, or 202 when there is nothing to say.
  void on_final(std::uint64_t exchange, std::optional<boost::json::value> final_message);
  /// The router dialect's answer; `request`: the message expected one.
  void on_router_final(std::uint64_t exchange, std::optional<boost::json::value> final_message,
                       bool request);
  /// A frame of the SSE stream this exchange writes; the first one switches the POST to SSE.
  void on_frame(std::uint64_t exchange, std::string frame, bool end);
  /// Ends this exchange's SSE response now (after the priming event when nothing was sent yet);
  /// the channel keeps what follows for a GET with Last-Event-ID (SEP-1699).
  void end_stream_for_reconnect(std::uint64_t exchange);

  /// A sink that hands the channel's frames to exchange `exchange` on the strand (any thread).
  SseChannel::Sink make_sink(std::uint64_t exchange);
  SseChannel::Sink make_sink() { return make_sink(exchange_); }
  /// The channel a POST's stream opened (attached as `token`): its frames are this exchange's.
  void adopt_channel(std::uint64_t exchange, std::shared_ptr<SseChannel> channel,
                     std::uint64_t token, std::string priming);

  template <class F>
  void post_to_self(F&& f) {
    shared_->gate->post(io_->executor(), std::forward<F>(f));
  }
  /// Whether the caller runs on this connection's strand (any thread may ask).
  bool on_own_strand() const;
  /// Runs `f` now when the caller already is on this connection's strand (a tool that ran inline
  /// finishing its call), else posts it: the post would wake the other I/O thread for nothing.
  /// Only for callers that hold no lock the connection's code could take again.
  template <class F>
  void run_on_self(F&& f) {
    if (on_own_strand()) return std::forward<F>(f)();
    post_to_self(std::forward<F>(f));
  }

  std::uint64_t exchange() const { return exchange_; }

 private:
  // First, so destroyed last: the socket and timers below need their io_context's services.
  const std::shared_ptr<void> io_owner_;

  enum class Mode { reading, waiting, streaming, writing, closed };

  // --- Reading and closing (connection.cpp) ---
  void do_read();
  void on_header(boost::beast::error_code ec, std::size_t);
  void on_read(boost::beast::error_code ec, std::size_t);
  void release_reading();
  /// Room in the read buffer for one read of up to `n` bytes: less (or none) as the buffer nears
  /// its bound, max_header_bytes, which caps what a peer can make it hold (a header block, a
  /// chunk-size line with its extensions, a trailer section, pipelined bytes).
  boost::asio::mutable_buffer read_room(std::size_t n);
  void on_read_error(boost::beast::error_code ec);
  void on_response_complete();
  void next_request();
  void release_exchange();
  void graceful_close();
  void drain();
  void disconnect();

  // --- Routing (connection_dispatch.cpp) ---
  /// When the header arrives, before the body is read: true when the request may go on;
  /// otherwise it was answered (503 draining, 404, 403 Host/Origin, 401/403/503 as authorize()).
  bool admit(const Request& req);
  /// Once the body is in: serves the admitted request.
  void handle(Request req);
  void method_not_allowed(std::string allow);
  /// `detailed`: the caller passed the token guard, so the body names the classifier and load.
  void health(bool detailed);
  void metrics();

  // --- Access tokens (connection_auth.cpp) ---
  /// Checks the Authorization header: true when the request may go on (no auth configured, a
  /// static token, or a valid JWT with the default scopes, whose scopes it then remembers).
  /// Otherwise responds 401 (403 for missing default scopes, 503 when the signing keys cannot be
  /// had) and returns false.
  bool authorize(const Request& req);
  /// The same check without an answer (GET /health shows details to authorized callers only).
  bool authorized_quietly(const Request& req);
  /// Before dispatch: true when the JWT (if any) grants every scope `message` needs (each
  /// tools/call of a batch included); otherwise responds 403 insufficient_scope.
  bool scopes_allow(const boost::json::value& message);
  /// GET /.well-known/oauth-protected-resource[/<resource path>]: true when it answered.
  bool protected_resource_metadata(std::string_view path, boost::beast::http::verb verb);

  // --- Streamable HTTP on /mcp (connection_post.cpp) ---
  std::optional<boost::json::value> read_rpc_body(const Request& req);
  /// The session named by Mcp-Session-Id, acquired (busy: the caller ends it), or nullptr after
  /// answering 400 (no id) or 404 (unknown id).
  std::shared_ptr<HttpSession> find_session(std::string_view id);
  void session_not_found();  ///< 404, the spec's answer to an id that names no session
  void post_mcp(const Request& req);
  void delete_mcp(const Request& req);

  // --- SSE GET streams (connection_sse.cpp) ---
  void get_mcp(const Request& req);
  bool open_stream_slot();
  void replay_gone();  ///< 410: a resumption whose events were dropped
  void bound_unacknowledged();
  void start_sse(bool priming);
  void queue_frame(std::uint64_t exchange, std::string frame, bool end);  ///< on_frame's work
  void watch_disconnect();
  void schedule_heartbeat();

  // --- Legacy HTTP+SSE (connection_legacy.cpp) ---
  void get_legacy();
  void post_legacy(const Request& req, std::string_view query);

  // --- Router dialect (connection_router.cpp) ---
  void post_router(const Request& req, std::string_view method);

  // --- Mounted application (connection_app.cpp) ---
  void serve_app(Request& req, std::string_view path);
  /// While the app works: a read that notices the client leaving and keeps what a pipelined
  /// request sends, up to the read buffer's bound; then park_reading().
  void watch_app_client();
  /// The read buffer is full of a pipelined request: reads stop (TCP holds the rest) until the
  /// answer is written, and a timer that never expires keeps the connection alive meanwhile.
  void park_reading();
  /// Ends the watch (read or park) when the answer is written; the next request is read after.
  void stop_watching();

 public:
  // Called on the strand by AppResponse (through the gate), for exchange `exchange` only.
  void app_respond(std::uint64_t exchange, unsigned status, Headers headers, std::string body);
  void app_begin(std::uint64_t exchange, unsigned status, Headers headers);
  void app_write(std::uint64_t exchange, std::string data);
  void app_end(std::uint64_t exchange, bool complete);

 private:
  // --- Writing (connection_write.cpp) ---
  /// A response head in three steps: the status line, Server and Content-Type (unless empty),
  /// with room for `reserve` more bytes; then fields (framing ones dropped); then Connection:
  /// close unless `keep_alive`, and Content-Length, or chunked without one.
  static std::string begin_head(unsigned status, std::string_view content_type,
                                std::size_t reserve = 0);
  static void append_fields(std::string& out, const Headers& headers);
  static void end_head(std::string& out, bool keep_alive,
                       std::optional<std::size_t> content_length);
  void respond(boost::beast::http::status status, std::string body,
               std::string_view content_type = "application/json", Headers headers = {});
  void enqueue(std::string bytes, bool last);
  void write_next();
  void on_write(boost::beast::error_code ec, std::size_t n);

  struct Out {
    std::string bytes;
    bool last;
  };

  std::unique_ptr<ConnectionIo> io_;
  std::shared_ptr<HttpShared> shared_;
  const boost::asio::ip::address peer_;
  boost::beast::flat_buffer buffer_;
  std::optional<boost::beast::http::request_parser<boost::beast::http::string_body>> parser_;
  Mode mode_ = Mode::reading;
  bool first_request_ = true;
  bool reading_counted_ = false;  // this request holds a drain count while it is read
  bool keep_alive_ = true;
  bool writing_ = false;
  bool hold_writes_ = false;       // queueing the parts of one answer: written together after
  std::size_t writing_count_ = 0;  // queue_'s first items, in the write in progress
  std::vector<boost::asio::const_buffer> write_buffers_;
  std::deque<Out> queue_;
  std::size_t queued_bytes_ = 0;

  // The exchange being served.
  std::uint64_t exchange_ = 0;
  Clock::time_point start_ = Clock::now();
  std::string route_ = "other";
  unsigned status_ = 0;
  std::optional<RequestGuard> guard_;
  /// The scopes of this request's JWT; nullopt when it carried none (static token, no auth).
  std::optional<std::set<std::string>> granted_scopes_;
  std::shared_ptr<SseChannel> channel_;
  std::uint64_t sink_token_ = 0;
  std::shared_ptr<HttpSession> init_entry_;
  bool awaiting_answer_ = false;  // the POST carried a request: no answer is 503, never 202
  std::shared_ptr<HttpSession> legacy_entry_;
  bool priming_allowed_ = false;  // this exchange's SSE stream starts with a priming event
  std::string priming_;           // the priming event of this exchange's resumable stream
  bool get_stream_ = false;
  bool stream_counted_ = false;
  std::optional<boost::asio::steady_timer> heartbeat_;  // GET streams: the keep-alive comments
  /// The app exchange in progress: told when the client goes away before it ended.
  std::shared_ptr<AppResponse> app_response_;
  bool watching_ = false;        // a read that only looks for the client's disconnect is pending
  bool resume_reading_ = false;  // ...and the exchange ended: read the next request after it
  /// Pending instead of that read once the read buffer is full (park_reading()).
  std::optional<boost::asio::steady_timer> parked_;
};

}  // namespace mcpclass::transport
