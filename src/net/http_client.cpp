// The only client TU that includes Beast: connections, requests and streamed response bodies.
#include "net/http_client.hpp"

#include "net/http_response.hpp"
#include "net/tls_context.hpp"

#include <fmt/format.h>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/url/parse.hpp>

#include <sys/socket.h>

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>

namespace mcpclass::net {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

bool is_loopback_host(std::string_view host) {
  if (beast::iequals(host, "localhost")) return true;
  boost::system::error_code ec;
  const auto address = boost::asio::ip::make_address(std::string(host), ec);
  return !ec && address.is_loopback();
}

HttpUrl parse_http_url(std::string_view url) {
  auto parsed = boost::urls::parse_uri(url);
  if (!parsed) throw HttpClientError(HttpFailure::unusable, fmt::format("invalid URL '{}'", url));
  const auto& u = *parsed;
  if (u.scheme() != "http" && u.scheme() != "https")
    throw HttpClientError(HttpFailure::unusable,
                          fmt::format("'{}': not an http:// or https:// URL", url));
  HttpUrl out;
  out.tls = u.scheme() == "https";
  if (u.host_type() == boost::urls::host_type::ipv6) {
    out.host = u.host_ipv6_address().to_string();
    out.host_header = "[" + out.host + "]";
  } else {
    out.host = u.host();
    out.host_header = out.host;
  }
  if (out.host.empty())
    throw HttpClientError(HttpFailure::unusable, fmt::format("'{}': no host", url));
  out.port = u.has_port() ? std::string(u.port()) : out.tls ? "443" : "80";
  if (u.has_port()) out.host_header += ":" + out.port;
  out.target = u.encoded_path().empty() ? "/" : std::string(u.encoded_path());
  if (u.has_query()) out.target += "?" + std::string(u.encoded_query());
  return out;
}

HttpUrl resolve_url(const HttpUrl& base, std::string_view reference) {
  if (reference.starts_with("http://") || reference.starts_with("https://"))
    return parse_http_url(reference);
  HttpUrl out = base;
  if (reference.starts_with("/")) {
    out.target = reference;
  } else {
    std::string dir = base.target.substr(0, base.target.find('?'));
    dir = dir.substr(0, dir.rfind('/') + 1);
    out.target = dir + std::string(reference);
  }
  return out;
}

namespace {

using TlsStream = beast::ssl_stream<beast::tcp_stream>;
using Clock = std::chrono::steady_clock;

// A kept connection failed before any byte of the request left: the peer cannot have seen it.
struct StaleConnection : std::exception {};

struct Exchange {
  HttpEngine::ExchangeId id = 0;
  ExchangeCallbacks callbacks;
  std::optional<beast::tcp_stream> plain;  // http://
  std::optional<TlsStream> tls;            // https://
  std::optional<asio::steady_timer> timer;
  bool cancelled = false;

  beast::tcp_stream* tcp() {
    if (tls) return &beast::get_lowest_layer(*tls);
    return plain ? &*plain : nullptr;
  }
};

// Whether an idle kept connection can carry a request: nothing may be readable on it. A peer
// that closed it shows end of stream; any byte (a TLS close_notify, a stray answer) makes it
// unusable too. Checked before writing, as curl and Go do, because once a request is written it
// is never sent again.
bool idle_connection_usable(beast::tcp_stream& stream) {
  auto& socket = stream.socket();
  // One recv: toggling the socket's blocking mode around it cost three ioctls per exchange.
  char byte = 0;
  const auto n = ::recv(socket.native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
}

}  // namespace

struct HttpEngine::Impl {
  // `external` null: a context of its own, run by a thread of its own.
  Impl(std::shared_ptr<asio::io_context> external, std::chrono::milliseconds timeout,
       std::string ca, std::size_t max_body, std::size_t keep_alive, std::size_t max_header)
      : owns_thread(external == nullptr),
        context(external ? std::move(external) : std::make_shared<asio::io_context>(1)),
        ioc(*context),
        connect_timeout(timeout),
        ca_file(std::move(ca)),
        response_limits{.header_bytes = max_header, .body_bytes = max_body},
        keep_alive_connections(keep_alive) {
    if (owns_thread) {
      guard.emplace(asio::make_work_guard(ioc));
      thread = std::thread([this] { ioc.run(); });
    }
  }

  const bool owns_thread;
  // Before the sockets below, so destroyed after them: they need their context's services.
  std::shared_ptr<asio::io_context> context;
  asio::io_context& ioc;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> guard;
  std::chrono::milliseconds connect_timeout;
  const std::string ca_file;
  const ResponseLimits response_limits;
  const std::size_t keep_alive_connections;
  std::thread thread;

  std::mutex tls_mutex;
  std::shared_ptr<asio::ssl::context> tls_context;

  asio::ssl::context& tls() {
    std::lock_guard lock(tls_mutex);
    if (!tls_context) {
      try {
        tls_context = make_client_tls_context(ca_file);
      } catch (const std::runtime_error& e) {
        throw HttpClientError(HttpFailure::unusable, e.what());
      }
    }
    return *tls_context;
  }

  std::mutex mutex;
  std::condition_variable cv;
  std::map<ExchangeId, std::shared_ptr<Exchange>> live;
  std::atomic<ExchangeId> next_id{1};
  bool stopped = false;

  void finish(const std::shared_ptr<Exchange>& ex, const HttpError& error) {
    if (ex->callbacks.on_end) ex->callbacks.on_end(error);
    ex->callbacks = {};
    std::lock_guard lock(mutex);
    live.erase(ex->id);
    cv.notify_all();
  }

  static void abort(Exchange& ex) {
    ex.cancelled = true;
    if (ex.timer) ex.timer->cancel();
    if (auto* stream = ex.tcp()) {
      beast::error_code ignored;
      stream->socket().shutdown(tcp::socket::shutdown_both, ignored);
      stream->cancel();
    }
  }

  asio::awaitable<void> run(std::shared_ptr<Exchange> ex, HttpUrl url, HttpRequest req) {
    constexpr auto tuple = asio::as_tuple(asio::use_awaitable);
    HttpError error;
    try {
      auto exec = co_await asio::this_coro::executor;
      if (req.delay.count() > 0) {
        auto& timer = ex->timer.emplace(exec);
        timer.expires_after(req.delay);
        co_await timer.async_wait(tuple);
        if (ex->cancelled) throw HttpClientError(HttpFailure::cancelled, "cancelled");
      }
      // One deadline for the whole exchange, whatever connections it takes.
      const std::optional<Clock::time_point> deadline =
          req.timeout.count() > 0 ? std::optional(Clock::now() + req.timeout) : std::nullopt;
      // A kept connection the peer closed before the request was written is replaced (the peer
      // never saw the request); nothing else is tried again.
      for (;;) {
        const bool reused = take_idle(*ex, url);
        if (!reused) co_await open(*ex, url, deadline);
        bool reusable = false;
        try {
          reusable = url.tls ? co_await transfer(*ex->tls, *ex, url, req, deadline, reused)
                             : co_await transfer(*ex->plain, *ex, url, req, deadline, reused);
        } catch (const StaleConnection&) {
          close(*ex);
          if (ex->cancelled) throw HttpClientError(HttpFailure::cancelled, "cancelled");
          continue;
        }
        if (reusable && !ex->cancelled && keep_alive_connections > 0) {
          keep_idle(*ex, url);
        } else {
          close(*ex);
        }
        break;
      }
    } catch (const HttpClientError& e) {
      error = {e.kind(), e.what()};
      close(*ex);
    } catch (const std::length_error& e) {  // a callback's own bound (SseParser's, per event)
      error = {HttpFailure::too_large, e.what()};
      close(*ex);
    } catch (const std::exception& e) {  // a callback gave up on the answer
      error = {HttpFailure::broken, e.what()};
      close(*ex);
    }
    if (ex->cancelled) error = {HttpFailure::cancelled, "cancelled"};
    finish(ex, error);
  }

  // --- Kept connections (only touched on the I/O thread) ---
  struct Idle {
    std::optional<beast::tcp_stream> plain;
    std::optional<TlsStream> tls;
  };
  std::map<std::string, std::vector<Idle>> idle;

  static std::string pool_key(const HttpUrl& url) {
    return (url.tls ? "https://" : "http://") + url.host + ":" + url.port;
  }

  // Takes the newest usable kept connection for `url`, closing the unusable ones on the way.
  bool take_idle(Exchange& ex, const HttpUrl& url) {
    auto it = idle.find(pool_key(url));
    while (it != idle.end() && !it->second.empty()) {
      Idle conn = std::move(it->second.back());
      it->second.pop_back();
      if (url.tls) {
        ex.tls.emplace(std::move(*conn.tls));
      } else {
        ex.plain.emplace(std::move(*conn.plain));
      }
      if (idle_connection_usable(*ex.tcp())) return true;
      close(ex);
    }
    return false;
  }

  void keep_idle(Exchange& ex, const HttpUrl& url) {
    auto& list = idle[pool_key(url)];
    if (list.size() >= keep_alive_connections) return close(ex);
    ex.tcp()->expires_never();
    Idle conn;
    if (ex.tls) conn.tls.emplace(std::move(*ex.tls));
    if (ex.plain) conn.plain.emplace(std::move(*ex.plain));
    ex.tls.reset();
    ex.plain.reset();
    list.push_back(std::move(conn));
  }

  static void close(Exchange& ex) {
    if (auto* stream = ex.tcp()) {
      beast::error_code ignored;
      stream->socket().shutdown(tcp::socket::shutdown_both, ignored);
      stream->close();
    }
    ex.tls.reset();
    ex.plain.reset();
  }

  // Resolves, connects and (https) handshakes, within connect_timeout and the exchange's deadline.
  asio::awaitable<void> open(Exchange& ex, const HttpUrl& url,
                             std::optional<Clock::time_point> deadline) {
    constexpr auto tuple = asio::as_tuple(asio::use_awaitable);
    auto exec = co_await asio::this_coro::executor;
    tcp::resolver resolver(exec);
    auto [rec, endpoints] = co_await resolver.async_resolve(url.host, url.port, tuple);
    if (rec)
      throw HttpClientError(HttpFailure::connect,
                            fmt::format("cannot resolve {}: {}", url.host, rec.message()));
    if (ex.cancelled) throw HttpClientError(HttpFailure::cancelled, "cancelled");
    if (url.tls) {
      asio::ssl::context* trust = nullptr;
      try {
        trust = &tls();
      } catch (const HttpClientError& e) {
        throw HttpClientError(HttpFailure::connect, e.what());
      }
      auto& stream = ex.tls.emplace(exec, *trust);
      expect_peer_name(stream.native_handle(), url.host);
      co_await connect(beast::get_lowest_layer(stream), endpoints, url, deadline);
      // Still within the connect deadline.
      auto [hec] = co_await stream.async_handshake(asio::ssl::stream_base::client, tuple);
      if (hec)
        throw ex.cancelled
            ? HttpClientError(HttpFailure::cancelled, "cancelled")
            : HttpClientError(peer_certificate_refused(stream.native_handle())
                                  ? HttpFailure::certificate
                                  : HttpFailure::connect,
                              tls_handshake_failure(stream.native_handle(), hec, url.origin()));
    } else {
      co_await connect(ex.plain.emplace(exec), endpoints, url, deadline);
    }
  }

  asio::awaitable<void> connect(beast::tcp_stream& stream,
                                const tcp::resolver::results_type& endpoints, const HttpUrl& url,
                                std::optional<Clock::time_point> deadline) const {
    const auto connect_deadline = Clock::now() + connect_timeout;
    stream.expires_at(deadline ? std::min(*deadline, connect_deadline) : connect_deadline);
    auto [cec, ep] = co_await stream.async_connect(endpoints, asio::as_tuple(asio::use_awaitable));
    if (cec)
      throw HttpClientError(HttpFailure::connect, fmt::format("cannot connect to {}:{}: {}",
                                                              url.host, url.port, cec.message()));
  }

  // read_response's view of an exchange.
  struct Sink {
    Exchange& ex;
    bool cancelled() const { return ex.cancelled; }
    void head(const HttpHead& h) const {
      if (ex.callbacks.on_head) ex.callbacks.on_head(h);
    }
    void data(std::string_view d) const {
      if (ex.callbacks.on_data) ex.callbacks.on_data(d);
    }
  };

  // Sends the request and streams the response to the callbacks; the same over TCP and TLS.
  // Returns whether the connection may carry another exchange. On a `reused` connection, a
  // write that failed before any byte left throws StaleConnection.
  template <class Stream>
  asio::awaitable<bool> transfer(Stream& stream, Exchange& ex, const HttpUrl& url,
                                 const HttpRequest& req, std::optional<Clock::time_point> deadline,
                                 bool reused) const {
    constexpr auto tuple = asio::as_tuple(asio::use_awaitable);
    auto& tcp_layer = beast::get_lowest_layer(stream);
    if (deadline)
      tcp_layer.expires_at(*deadline);
    else
      tcp_layer.expires_never();

    http::request<http::string_body> hr{http::string_to_verb(req.method), req.target, 11};
    hr.set(http::field::host, url.host_header);
    hr.set(http::field::user_agent, "mcpclass");
    for (const auto& [name, value] : req.headers) hr.set(name, value);
    if (!req.body.empty() || req.method == "POST") {
      hr.body() = req.body;
      hr.prepare_payload();
    }
    auto [wec, wn] = co_await http::async_write(stream, hr, tuple);
    if (wec && reused && wn == 0 && !ex.cancelled && wec != beast::error::timeout)
      throw StaleConnection();
    if (wec)
      throw HttpClientError(wec == beast::error::timeout ? HttpFailure::timeout : HttpFailure::send,
                            fmt::format("cannot send request: {}", wec.message()));
    if (ex.callbacks.on_sent && !ex.cancelled) ex.callbacks.on_sent();

    beast::flat_buffer buffer(response_limits.header_bytes);
    Sink sink{ex};
    co_return co_await read_response(stream, buffer, response_limits, sink);
  }
};

HttpEngine::HttpEngine(std::chrono::milliseconds connect_timeout, std::string ca_file,
                       std::size_t max_body_bytes, std::size_t keep_alive_connections,
                       std::size_t max_header_bytes)
    : impl_(std::make_shared<Impl>(nullptr, connect_timeout, std::move(ca_file), max_body_bytes,
                                   keep_alive_connections, max_header_bytes)) {}

HttpEngine::HttpEngine(std::shared_ptr<boost::asio::io_context> context,
                       std::chrono::milliseconds connect_timeout, std::string ca_file,
                       std::size_t max_body_bytes, std::size_t keep_alive_connections,
                       std::size_t max_header_bytes) {
  if (!context) throw std::invalid_argument("HttpEngine: no io_context");
  impl_ = std::make_shared<Impl>(std::move(context), connect_timeout, std::move(ca_file),
                                 max_body_bytes, keep_alive_connections, max_header_bytes);
}

void HttpEngine::prepare_tls() {
  impl_->tls();
}

HttpEngine::~HttpEngine() {
  stop();
}

HttpEngine::ExchangeId HttpEngine::start(const HttpUrl& url, HttpRequest request,
                                         ExchangeCallbacks callbacks) {
  auto ex = std::make_shared<Exchange>();
  ex->id = impl_->next_id++;
  ex->callbacks = std::move(callbacks);
  {
    std::lock_guard lock(impl_->mutex);
    if (impl_->stopped) throw HttpClientError(HttpFailure::cancelled, "HTTP client stopped");
    impl_->live[ex->id] = ex;
  }
  if (impl_->owns_thread) {
    // Its own context dies with it (and the coroutines with the context): no cycle.
    asio::co_spawn(impl_->ioc, impl_->run(ex, url, std::move(request)), asio::detached);
  } else {
    // On a caller's context the coroutine may outlive the engine: it holds the engine's state.
    asio::co_spawn(
        impl_->ioc,
        [impl = impl_, ex, url, request = std::move(request)]() mutable {
          return impl->run(std::move(ex), url, std::move(request));
        },
        asio::detached);
  }
  return ex->id;
}

void HttpEngine::cancel(ExchangeId id) {
  // Weak: a handler left queued in a stopped context must not keep the engine (and its context).
  asio::post(impl_->ioc, [weak = std::weak_ptr<Impl>(impl_), id] {
    const auto impl = weak.lock();
    if (!impl) return;
    std::shared_ptr<Exchange> ex;
    {
      std::lock_guard lock(impl->mutex);
      if (auto it = impl->live.find(id); it != impl->live.end()) ex = it->second;
    }
    if (ex) Impl::abort(*ex);
  });
}

HttpEngine::Result HttpEngine::perform(const HttpUrl& url, HttpRequest request) {
  auto result = std::make_shared<Result>();
  auto done = std::make_shared<std::promise<void>>();
  auto future = done->get_future();
  ExchangeCallbacks cb;
  cb.on_head = [result](const HttpHead& h) { result->head = h; };
  cb.on_data = [result](std::string_view d) { result->body.append(d); };
  cb.on_end = [result, done](const HttpError& e) {
    result->error = e;
    done->set_value();
  };
  start(url, std::move(request), std::move(cb));
  future.wait();
  return std::move(*result);
}

void HttpEngine::stop() {
  const auto impl = impl_;
  {
    std::lock_guard lock(impl->mutex);
    if (impl->stopped) return;
    impl->stopped = true;
  }
  auto abort_all = [weak = std::weak_ptr<Impl>(impl)] {
    const auto self = weak.lock();
    if (!self) return;
    std::vector<std::shared_ptr<Exchange>> all;
    {
      std::lock_guard lock(self->mutex);
      for (auto& [id, ex] : self->live) all.push_back(ex);
    }
    for (auto& ex : all) Impl::abort(*ex);
    self->idle.clear();
  };
  if (!impl->owns_thread) {
    // Nothing runs a stopped context any more: close here. Else its own thread ends them.
    if (!impl->ioc.stopped()) return asio::post(impl->ioc, std::move(abort_all));
    abort_all();
    std::lock_guard lock(impl->mutex);
    impl->live.clear();
    return;
  }
  asio::post(impl->ioc, abort_all);
  {
    std::unique_lock lock(impl->mutex);
    impl->cv.wait_for(lock, std::chrono::seconds(3), [&] { return impl->live.empty(); });
  }
  impl->guard.reset();
  impl->ioc.stop();
  if (impl->thread.joinable()) impl->thread.join();
}

}  // namespace mcpclass::net
