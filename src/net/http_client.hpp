// Internal: the HTTP/1.1 machinery shared by the client transports (Boost.Beast behind a
// Beast-free interface, so that only client_http_core.cpp pays for Beast). One I/O thread per
// engine, or the caller's io_context; every exchange uses its own connection (TLS for https://
// URLs, the peer's certificate verified) and streams its body to callbacks.
// Thread-safety: start() and cancel() may be called from any thread, perform() from any thread
// except the I/O thread (it blocks); callbacks run on the I/O thread; stop() belongs to the owner.
#pragma once

#include "mcpclass/util/limits.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace boost::asio {
class io_context;
}

namespace mcpclass::net {

/// A parsed http:// or https:// URL.
struct HttpUrl {
  bool tls = false;  ///< https
  std::string host;  ///< without brackets for IPv6
  std::string port;
  std::string target;  ///< path and query, "/" when empty
  std::string host_header;
  /// scheme://host_header, for messages.
  std::string origin() const { return (tls ? "https://" : "http://") + host_header; }
};

/// Throws HttpClientError (unusable) for malformed URLs and schemes other than http and https.
HttpUrl parse_http_url(std::string_view url);
/// Whether `host` (an HttpUrl host: a name, or an address without brackets) is this machine:
/// "localhost", an address in 127.0.0.0/8, or ::1. Names are not resolved, so
/// "127.attacker.example" is not loopback.
bool is_loopback_host(std::string_view host);
/// `reference` (absolute URL or path) resolved against `base`, as an HttpUrl.
HttpUrl resolve_url(const HttpUrl& base, std::string_view reference);

struct HttpRequest {
  std::string method = "POST";
  std::string target;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  /// Deadline for the whole exchange, body included; zero = none once connected.
  std::chrono::milliseconds timeout{0};
  /// Wait this long before connecting (reconnects after an SSE `retry:`); cancellable.
  std::chrono::milliseconds delay{0};
};

struct HttpHead {
  int status = 0;
  /// Every field line as received, in order, names lower-cased (a name may repeat: Set-Cookie).
  std::vector<std::pair<std::string, std::string>> headers;
  /// The first value of `lower_name`, or "".
  std::string header(std::string_view lower_name) const {
    for (const auto& [name, value] : headers)
      if (name == lower_name) return value;
    return {};
  }
};

/// Why an exchange failed.
enum class HttpFailure {
  none,
  cancelled,    ///< cancel() or stop()
  connect,      ///< resolving, connecting or the TLS handshake failed: the request was not sent
  certificate,  ///< the https:// peer's certificate was refused: the request was not sent
  unusable,     ///< the URL or the CA file cannot be used: nothing was sent
  send,         ///< writing the request failed
  timeout,      ///< HttpRequest::timeout passed
  too_large,    ///< the peer passed a byte limit (header block, chunk line, trailer, body)
  protocol,     ///< the answer is not valid HTTP/1.1 (or is a 101)
  broken,       ///< the connection broke or closed before the answer ended
};

/// What the engine throws: from parse_http_url(), prepare_tls() and start() (kind unusable, or
/// cancelled once stopped), and inside an exchange, where it ends up in on_end as an HttpError.
/// The layers above turn the kind into their own errors (client::CertificateError, 504, ...).
class HttpClientError : public std::runtime_error {
 public:
  HttpClientError(HttpFailure kind, const std::string& message)
      : std::runtime_error(message), kind_(kind) {}
  HttpFailure kind() const { return kind_; }

 private:
  HttpFailure kind_;
};

struct HttpError {
  HttpFailure kind = HttpFailure::none;
  std::string message;  ///< for people; empty when kind is none
  explicit operator bool() const { return kind != HttpFailure::none; }
};

struct ExchangeCallbacks {
  /// Once the request was written to a connection (before that, a failure means the peer was
  /// never reached: it cannot have acted on the request).
  std::function<void()> on_sent;
  std::function<void(const HttpHead& head)> on_head;
  std::function<void(std::string_view data)> on_data;
  /// Exactly once per started exchange (unless the engine is stopped first): kind none on a
  /// clean end, else the reason (kind cancelled, message "cancelled", after cancel()).
  std::function<void(const HttpError& error)> on_end;
};

class HttpEngine {
 public:
  /// `ca_file`: PEM CAs that https:// peers are verified against; empty = the system's trust
  /// store. Connect and TLS handshake together are bounded by `connect_timeout`.
  /// `max_body_bytes`: a response that is not an SSE stream fails once its body passes this
  /// (a hostile peer cannot fill memory); SSE streams are bounded per event by SseParser.
  /// `keep_alive_connections`: idle connections kept per origin for later exchanges (0 = a
  /// connection per exchange). A kept connection is checked before it carries a request: one the
  /// peer closed meanwhile (or that has unexpected bytes) is replaced. Once a request may have
  /// reached the peer it is never sent again, and HttpRequest::timeout covers the whole exchange.
  /// `max_header_bytes`: the read buffer, and with it the response's header blocks (1xx
  /// included), each chunk-size line with its extensions, and the trailer section.
  HttpEngine(std::chrono::milliseconds connect_timeout, std::string ca_file,
             std::size_t max_body_bytes = util::limits::kMaxClientMessageBytes,
             std::size_t keep_alive_connections = 0,
             std::size_t max_header_bytes = util::limits::kMaxClientHeaderBytes);
  /// The same engine on the caller's `context` (no thread of its own, which it keeps alive):
  /// an exchange started from a thread that runs `context` costs no hand-over between threads
  /// (the routing proxy starts its upstream exchanges on the client connection's context).
  /// stop() then waits for nothing: the exchanges still running end on `context` (on_end with
  /// kind cancelled), so callbacks must own what they touch. Once `context` was stopped (and its
  /// threads joined), stop() closes everything at once on the calling thread.
  HttpEngine(std::shared_ptr<boost::asio::io_context> context,
             std::chrono::milliseconds connect_timeout, std::string ca_file,
             std::size_t max_body_bytes = util::limits::kMaxClientMessageBytes,
             std::size_t keep_alive_connections = 0,
             std::size_t max_header_bytes = util::limits::kMaxClientHeaderBytes);
  /// Calls stop().
  ~HttpEngine();
  HttpEngine(const HttpEngine&) = delete;
  HttpEngine& operator=(const HttpEngine&) = delete;

  /// Loads the TLS trust now (it is otherwise loaded by the first https:// exchange). Throws
  /// HttpClientError (unusable) naming the CA file that cannot be used.
  void prepare_tls();

  using ExchangeId = std::uint64_t;
  /// Throws HttpClientError (cancelled) once stop() was called.
  ExchangeId start(const HttpUrl& url, HttpRequest request, ExchangeCallbacks callbacks);
  /// Aborts an exchange (its on_end gets "cancelled"). Unknown ids are ignored.
  void cancel(ExchangeId id);

  struct Result {
    HttpHead head;
    std::string body;
    HttpError error;  ///< kind none on success (any status)
  };
  /// Runs one exchange to completion and returns it (blocking; not on the I/O thread).
  Result perform(const HttpUrl& url, HttpRequest request);

  /// Cancels every exchange, waits briefly for them to end, and joins the I/O thread. No
  /// callback runs after it returns. Idempotent. (On the caller's context: see above.)
  void stop();

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace mcpclass::net
