// The only client TU that includes Beast: connections, requests and streamed response bodies.
#include "net/http_client.hpp"

#include "mcpclass/client/errors.hpp"
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

#include <array>
#include <atomic>
#include <cctype>
#include <condition_variable>
#include <future>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>

namespace mcpclass::transport::detail {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using client::TransportError;

std::string excerpt(std::string_view body) {
  return std::string(body.substr(0, 200));
}

bool is_loopback_host(std::string_view host) {
  if (beast::iequals(host, "localhost")) return true;
  boost::system::error_code ec;
  const auto address = boost::asio::ip::make_address(std::string(host), ec);
  return !ec && address.is_loopback();
}

HttpUrl parse_http_url(std::string_view url) {
  auto parsed = boost::urls::parse_uri(url);
  if (!parsed) throw TransportError(fmt::format("invalid URL '{}'", url));
  const auto& u = *parsed;
  if (u.scheme() != "http" && u.scheme() != "https")
    throw TransportError(fmt::format("'{}': not an http:// or https:// URL", url));
  HttpUrl out;
  out.tls = u.scheme() == "https";
  if (u.host_type() == boost::urls::host_type::ipv6) {
    out.host = u.host_ipv6_address().to_string();
    out.host_header = "[" + out.host + "]";
  } else {
    out.host = u.host();
    out.host_header = out.host;
  }
  if (out.host.empty()) throw TransportError(fmt::format("'{}': no host", url));
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

// A kept connection failed before the answer began: the peer closed it while it was idle.
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

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

struct HttpEngine::Impl {
  Impl(std::chrono::milliseconds timeout, std::string ca, std::size_t max_body,
       std::size_t keep_alive)
      : guard(asio::make_work_guard(ioc)),
        connect_timeout(timeout),
        ca_file(std::move(ca)),
        max_body_bytes(max_body),
        keep_alive_connections(keep_alive) {
    thread = std::thread([this] { ioc.run(); });
  }

  asio::io_context ioc;
  asio::executor_work_guard<asio::io_context::executor_type> guard;
  std::chrono::milliseconds connect_timeout;
  const std::string ca_file;
  const std::size_t max_body_bytes;
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
        throw TransportError(e.what());
      }
    }
    return *tls_context;
  }

  std::mutex mutex;
  std::condition_variable cv;
  std::map<ExchangeId, std::shared_ptr<Exchange>> live;
  std::atomic<ExchangeId> next_id{1};
  bool stopped = false;

  void finish(const std::shared_ptr<Exchange>& ex, const std::string& error) {
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
    std::string error;
    try {
      auto exec = co_await asio::this_coro::executor;
      if (req.delay.count() > 0) {
        auto& timer = ex->timer.emplace(exec);
        timer.expires_after(req.delay);
        co_await timer.async_wait(tuple);
        if (ex->cancelled) throw std::runtime_error("cancelled");
      }
      // A kept connection may have been closed by the peer meanwhile: then the request is sent
      // again on a new one (the peer never saw it).
      for (;;) {
        const bool reused = take_idle(*ex, url);
        if (!reused) co_await open(*ex, url);
        bool reusable = false;
        try {
          reusable = url.tls ? co_await transfer(*ex->tls, *ex, url, req, max_body_bytes, reused)
                             : co_await transfer(*ex->plain, *ex, url, req, max_body_bytes, reused);
        } catch (const StaleConnection&) {
          close(*ex);
          if (ex->cancelled) throw std::runtime_error("cancelled");
          continue;
        }
        if (reusable && !ex->cancelled && keep_alive_connections > 0) {
          keep_idle(*ex, url);
        } else {
          close(*ex);
        }
        break;
      }
    } catch (const std::exception& e) {
      error = e.what();
      close(*ex);
    }
    if (ex->cancelled) error = "cancelled";
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

  bool take_idle(Exchange& ex, const HttpUrl& url) {
    auto it = idle.find(pool_key(url));
    if (it == idle.end() || it->second.empty()) return false;
    Idle conn = std::move(it->second.back());
    it->second.pop_back();
    if (url.tls) {
      ex.tls.emplace(std::move(*conn.tls));
    } else {
      ex.plain.emplace(std::move(*conn.plain));
    }
    return true;
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

  // Resolves, connects and (https) handshakes, within connect_timeout.
  asio::awaitable<void> open(Exchange& ex, const HttpUrl& url) {
    constexpr auto tuple = asio::as_tuple(asio::use_awaitable);
    auto exec = co_await asio::this_coro::executor;
    tcp::resolver resolver(exec);
    auto [rec, endpoints] = co_await resolver.async_resolve(url.host, url.port, tuple);
    if (rec)
      throw std::runtime_error(fmt::format("cannot resolve {}: {}", url.host, rec.message()));
    if (ex.cancelled) throw std::runtime_error("cancelled");
    if (url.tls) {
      auto& stream = ex.tls.emplace(exec, tls());
      expect_peer_name(stream.native_handle(), url.host);
      co_await connect(beast::get_lowest_layer(stream), endpoints, url);
      // Still within the connect deadline.
      auto [hec] = co_await stream.async_handshake(asio::ssl::stream_base::client, tuple);
      if (hec)
        throw std::runtime_error(
            ex.cancelled ? "cancelled"
                         : tls_handshake_failure(stream.native_handle(), hec, url.origin()));
    } else {
      co_await connect(ex.plain.emplace(exec), endpoints, url);
    }
  }

  asio::awaitable<void> connect(beast::tcp_stream& stream,
                                const tcp::resolver::results_type& endpoints,
                                const HttpUrl& url) const {
    stream.expires_after(connect_timeout);
    auto [cec, ep] = co_await stream.async_connect(endpoints, asio::as_tuple(asio::use_awaitable));
    if (cec)
      throw std::runtime_error(
          fmt::format("cannot connect to {}:{}: {}", url.host, url.port, cec.message()));
  }

  // Sends the request and streams the response to the callbacks; the same over TCP and TLS.
  // Returns whether the connection may carry another exchange. On a `reused` connection, a
  // failure before any byte of the answer throws StaleConnection.
  template <class Stream>
  static asio::awaitable<bool> transfer(Stream& stream, Exchange& ex, const HttpUrl& url,
                                        const HttpRequest& req, std::size_t max_body, bool reused) {
    constexpr auto tuple = asio::as_tuple(asio::use_awaitable);
    auto& tcp_layer = beast::get_lowest_layer(stream);
    if (req.timeout.count() > 0)
      tcp_layer.expires_after(req.timeout);
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
    if (wec && reused && !ex.cancelled) throw StaleConnection();
    if (wec) throw std::runtime_error(fmt::format("cannot send request: {}", wec.message()));
    if (ex.callbacks.on_sent && !ex.cancelled) ex.callbacks.on_sent();

    beast::flat_buffer buffer;
    http::response_parser<http::buffer_body> parser;
    parser.body_limit(boost::none);
    parser.header_limit(64 * 1024);
    auto [hec, hn] = co_await http::async_read_header(stream, buffer, parser, tuple);
    if (hec && reused && !ex.cancelled && buffer.size() == 0 && !parser.got_some())
      throw StaleConnection();
    if (hec) throw std::runtime_error(fmt::format("no response: {}", hec.message()));
    HttpHead head;
    head.status = static_cast<int>(parser.get().result_int());
    for (const auto& field : parser.get())
      head.headers[lower(field.name_string())] = std::string(field.value());
    if (ex.callbacks.on_head && !ex.cancelled) ex.callbacks.on_head(head);

    // An SSE stream may run for hours (its parser bounds each event); any other body is
    // buffered by the caller, so it is bounded here, while reading.
    const bool event_stream =
        head.header("content-type").find("text/event-stream") != std::string::npos;
    std::size_t body_bytes = 0;
    std::array<char, 16384> chunk{};
    while (!parser.is_done() && !ex.cancelled) {
      parser.get().body().data = chunk.data();
      parser.get().body().size = chunk.size();
      // read_some: return with whatever arrived (SSE events are small and must not wait for
      // the buffer to fill up).
      auto [bec, bn] = co_await http::async_read_some(stream, buffer, parser, tuple);
      if (bec == http::error::need_buffer) bec = {};
      const std::size_t got = chunk.size() - parser.get().body().size;
      body_bytes += got;
      if (!event_stream && body_bytes > max_body)
        throw std::runtime_error(
            fmt::format("response body larger than {} bytes (max_message_bytes)", max_body));
      if (got > 0 && ex.callbacks.on_data && !ex.cancelled)
        ex.callbacks.on_data(std::string_view(chunk.data(), got));
      if (bec) throw std::runtime_error(fmt::format("response broken: {}", bec.message()));
    }
    co_return parser.is_done() && parser.keep_alive() && buffer.size() == 0;
  }
};

HttpEngine::HttpEngine(std::chrono::milliseconds connect_timeout, std::string ca_file,
                       std::size_t max_body_bytes, std::size_t keep_alive_connections)
    : impl_(std::make_shared<Impl>(connect_timeout, std::move(ca_file), max_body_bytes,
                                   keep_alive_connections)) {}

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
    if (impl_->stopped) throw TransportError("HTTP client stopped");
    impl_->live[ex->id] = ex;
  }
  asio::co_spawn(impl_->ioc, impl_->run(ex, url, std::move(request)), asio::detached);
  return ex->id;
}

void HttpEngine::cancel(ExchangeId id) {
  Impl* impl = impl_.get();
  asio::post(impl->ioc, [impl, id] {
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
  cb.on_end = [result, done](const std::string& e) {
    result->error = e;
    done->set_value();
  };
  start(url, std::move(request), std::move(cb));
  future.wait();
  return std::move(*result);
}

void HttpEngine::stop() {
  Impl* impl = impl_.get();
  {
    std::lock_guard lock(impl->mutex);
    if (impl->stopped) return;
    impl->stopped = true;
  }
  asio::post(impl->ioc, [impl] {
    std::vector<std::shared_ptr<Exchange>> all;
    {
      std::lock_guard lock(impl->mutex);
      for (auto& [id, ex] : impl->live) all.push_back(ex);
    }
    for (auto& ex : all) Impl::abort(*ex);
  });
  {
    std::unique_lock lock(impl->mutex);
    impl->cv.wait_for(lock, std::chrono::seconds(3), [impl] { return impl->live.empty(); });
  }
  impl->guard.reset();
  impl->ioc.stop();
  if (impl->thread.joinable()) impl->thread.join();
}

}  // namespace mcpclass::transport::detail
