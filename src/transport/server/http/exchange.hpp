// Internal: one request on a Connection and its response. The connection opens an Exchange when a
// request's header arrives; the middleware records what it learns on it (the route label, the
// granted scopes), the handler answers through it (respond(), a chunked body, or an SSE stream
// fed by a channel's sink), and the connection releases it once the answer is written or the
// connection closes. Everything about one request lives here, not on the connection.
// Thread-safety: the responder and the state run on the connection's strand; post(),
// run_on_self() and on_own_strand() may be called from any thread (the engine's streams).
#pragma once

#include "transport/server/http/head.hpp"
#include "transport/server/http/shared.hpp"
#include "transport/server/http/sse.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/http.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mcpclass::transport::server {

inline constexpr std::string_view kSessionHeader = "Mcp-Session-Id";
inline constexpr std::string_view kVersionHeader = "MCP-Protocol-Version";
/// Body bytes queued for a reader that does not keep up before it is disconnected.
inline constexpr std::size_t kMaxQueuedBytes = 8 * 1024 * 1024;

using Request = boost::beast::http::request<boost::beast::http::string_body>;

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

class Connection;
struct HttpRoute;

class Exchange : public std::enable_shared_from_this<Exchange> {
 public:
  using Clock = std::chrono::steady_clock;

  Exchange(std::weak_ptr<Connection> connection, std::shared_ptr<HttpShared> shared,
           boost::asio::any_io_executor executor, boost::asio::ip::address peer);
  ~Exchange();
  Exchange(const Exchange&) = delete;
  Exchange& operator=(const Exchange&) = delete;

  // --- The responder (on the strand); ignored once the exchange ended. ---

  /// A whole response with Content-Length.
  void respond(boost::beast::http::status status, std::string body,
               std::string_view content_type = "application/json", HeaderList headers = {});
  /// 405 with its Allow header.
  void method_not_allowed(std::string allow);
  /// A chunked response: the head now, then write_chunk()..., then end_chunked().
  void begin_chunked(unsigned status, const HeaderList& headers);
  /// One chunk; a reader too slow for it (kMaxQueuedBytes) is disconnected.
  void write_chunk(std::string_view data);
  /// The last chunk; without it (`complete` false) the connection closes after what was sent.
  void end_chunked(bool complete);
  /// The SSE response head, with `headers`, and the priming event when `priming` and one is set.
  void start_sse(bool priming, const HeaderList& headers = {});
  /// A frame of the SSE stream this exchange writes; the first one starts the stream (SSE head,
  /// priming event). `end`: the stream's last.
  void on_frame(std::string frame, bool end);
  /// Ends the SSE response now (after the priming event when nothing was sent yet); the channel
  /// keeps what follows for a GET with Last-Event-ID (SEP-1699).
  void end_stream_for_reconnect();
  /// The channel whose frames are this exchange's, attached as `token`; `priming`: the event its
  /// stream starts with ("" when not resumable). Detached at once when the exchange moved on.
  void adopt_channel(std::shared_ptr<SseChannel> channel, std::uint64_t token, std::string priming);
  /// A sink that hands a channel's frames to this exchange on the strand (any thread).
  SseChannel::Sink make_sink();
  /// An idle stream gets an SSE comment every sse_heartbeat: proxies keep it open, and a peer
  /// that vanished or stopped reading is found by the write timeout.
  void keep_stream_alive();
  /// Takes a GET stream slot for this client: false after answering 503 when none is free. The
  /// connection ends with the stream.
  bool take_stream_slot();
  /// Gives the slot back (a stream refused after all); the connection still closes after.
  void return_stream_slot();
  /// See Connection::watch_client, bound_unacknowledged.
  void watch_client(bool keep_bytes);
  void bound_unacknowledged();
  /// Closes the connection at once.
  void disconnect();

  /// No response was begun yet (the handler or the engine is still working).
  bool waiting() const { return state_ == State::waiting; }
  bool streaming() const { return state_ == State::streaming; }
  /// The connection released it: what still arrives for it is dropped.
  bool ended() const { return state_ == State::ended; }
  /// Runs when the exchange is released (answer written, or connection closed).
  void on_release(std::function<void()> f) { on_release_.push_back(std::move(f)); }
  /// Called by the connection: lets go of what the exchange held.
  void release();

  // --- Reaching the strand from any thread ---

  template <class F>
  void post(F&& f) {
    shared->gate->post(executor_, std::forward<F>(f));
  }
  /// Whether the caller runs on the connection's strand.
  bool on_own_strand() const;
  /// Runs `f` now when the caller already is on the strand (a tool that ran inline finishing its
  /// call), else posts it: the post would wake the other I/O thread for nothing. Only for
  /// callers that hold no lock the connection's code could take again.
  template <class F>
  void run_on_self(F&& f) {
    if (on_own_strand()) return std::forward<F>(f)();
    post(std::forward<F>(f));
  }
  /// The connection, or nullptr once it is gone.
  std::shared_ptr<Connection> connection() const { return connection_.lock(); }

  // --- What middleware and handlers know about the request ---

  const std::shared_ptr<HttpShared> shared;
  const boost::asio::ip::address peer;
  const Clock::time_point start = Clock::now();
  /// The /metrics route label.
  std::string route = "other";
  unsigned status = 0;
  bool keep_alive = true;
  /// The handler-table entry the header named (HttpFront::admit), or nullptr.
  const HttpRoute* target = nullptr;
  /// The target without its query, and what follows '?' (or empty): views of the request's
  /// target, valid during HttpFront::admit() and, set again, HttpHandler::serve() only.
  std::string_view path;
  std::string_view query;
  /// Held while the request is read: a drain that starts meanwhile waits for it.
  std::optional<RequestGuard> reading;
  /// Held while the request is served (in flight for the drain, its session busy).
  std::optional<RequestGuard> guard;
  /// The scopes of this request's JWT; nullopt when it carried none (static token, no auth).
  std::optional<std::set<std::string>> granted_scopes;
  /// A stream that closes the connection when it ends (a GET stream).
  bool ends_connection = false;
  /// The SSE stream starts with the priming event (set before the first frame arrives).
  bool priming_allowed = false;
  /// Fields of the SSE head when a POST switches to SSE (a new session's id).
  HeaderList sse_headers;

 private:
  enum class State { waiting, streaming, writing, ended };
  void queue_frame(std::string frame, bool end);
  void write(std::string bytes, bool last);

  const std::weak_ptr<Connection> connection_;
  const boost::asio::any_io_executor executor_;
  State state_ = State::waiting;
  std::shared_ptr<SseChannel> channel_;
  std::uint64_t sink_token_ = 0;
  std::string priming_;
  bool stream_slot_ = false;
  std::optional<boost::asio::steady_timer> heartbeat_;
  std::vector<std::function<void()>> on_release_;
};

}  // namespace mcpclass::transport::server
