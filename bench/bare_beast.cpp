// The HTTP baseline between nginx and mcpclass (issue 16, bench/suite.py section_http): a bare
// Boost.Beast server set up like mcpclass's (src/transport/server/http/server.cpp,
// connection*.cpp) that answers every request with fixed bytes, so `mcpclass ÷ bare Beast` is
// the cost of MCP work and `bare Beast ÷ nginx` the cost of Beast and Asio on this box.
// Mirrored: the acceptor (reuse_address, max_listen_connections), accepting onto a strand, 2 I/O
// threads on one io_context, TCP_NODELAY,
// beast::tcp_stream with the same read/idle/write timeouts, a fresh request_parser<string_body>
// per request with the same limits, header then body, and the answer written as one buffer (the
// head written directly, as mcpclass's Connection::respond does, then the body), keep-alive as
// the request asks.
// Not mirrored: TLS, sessions, auth, metrics, the JSON-RPC engine: what mcpclass adds.
// Usage: bare_beast --body-file FILE [--port N] [--threads N]; prints
// "bare beast listening on http://127.0.0.1:PORT" on stderr once it accepts.
#include <boost/asio/dispatch.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;

// HttpServerOptions' defaults.
constexpr auto kReadTimeout = std::chrono::seconds(30);
constexpr auto kIdleTimeout = std::chrono::seconds(60);
constexpr auto kWriteTimeout = std::chrono::seconds(30);
constexpr std::size_t kMaxBodyBytes = 4 * 1024 * 1024;
constexpr std::uint32_t kMaxHeaderBytes = 16 * 1024;

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(tcp::socket socket, const std::string& body)
      : stream_(std::move(socket)), body_(body) {}

  void start() {
    net::dispatch(stream_.get_executor(), [self = shared_from_this()] { self->do_read(); });
  }

 private:
  void do_read() {
    parser_.emplace();
    parser_->body_limit(kMaxBodyBytes);
    parser_->header_limit(kMaxHeaderBytes);
    stream_.expires_after(first_request_ ? kReadTimeout : kIdleTimeout);
    http::async_read_header(stream_, buffer_, *parser_,
                            beast::bind_front_handler(&Connection::on_header, shared_from_this()));
  }

  void on_header(beast::error_code ec, std::size_t) {
    if (ec) return close();
    first_request_ = false;
    stream_.expires_after(kReadTimeout);
    http::async_read(stream_, buffer_, *parser_,
                     beast::bind_front_handler(&Connection::on_read, shared_from_this()));
  }

  void on_read(beast::error_code ec, std::size_t) {
    if (ec) return close();
    stream_.expires_never();
    const auto req = parser_->release();
    keep_alive_ = req.keep_alive();
    // Built per answer as mcpclass's Connection::respond builds it, not cached: the same work.
    std::string out;
    out.reserve(160 + body_.size());
    char digits[20];
    out.append("HTTP/1.1 ");
    out.append(digits, std::to_chars(digits, digits + sizeof digits, 200).ptr);
    out.append(" ").append(http::obsolete_reason(http::status::ok));
    out.append("\r\nServer: mcpclass\r\nContent-Type: application/json\r\n");
    if (!keep_alive_) out.append("Connection: close\r\n");
    out.append("Content-Length: ");
    out.append(digits, std::to_chars(digits, digits + sizeof digits, body_.size()).ptr);
    out.append("\r\n\r\n");
    out += body_;
    out_ = std::move(out);
    stream_.expires_after(kWriteTimeout);
    net::async_write(stream_, net::buffer(out_),
                     beast::bind_front_handler(&Connection::on_write, shared_from_this()));
  }

  void on_write(beast::error_code ec, std::size_t) {
    if (ec || !keep_alive_) return close();
    do_read();
  }

  void close() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
    stream_.close();
  }

  beast::tcp_stream stream_;
  const std::string& body_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  std::string out_;
  bool first_request_ = true;
  bool keep_alive_ = true;
};

class Listener {
 public:
  Listener(net::io_context& ioc, const tcp::endpoint& endpoint, std::string body)
      : ioc_(ioc), acceptor_(ioc), body_(std::move(body)) {
    acceptor_.open(endpoint.protocol());
    acceptor_.set_option(net::socket_base::reuse_address(true));
    acceptor_.bind(endpoint);
    acceptor_.listen(net::socket_base::max_listen_connections);
  }

  unsigned short port() const { return acceptor_.local_endpoint().port(); }

  void accept() {
    acceptor_.async_accept(net::make_strand(ioc_), [this](beast::error_code ec, tcp::socket s) {
      if (ec == net::error::operation_aborted) return;
      if (!ec) {
        // Like mcpclass: without it a response split across writes waits for a delayed ACK.
        beast::error_code ignored;
        s.set_option(tcp::no_delay(true), ignored);
        std::make_shared<Connection>(std::move(s), body_)->start();
      }
      accept();
    });
  }

 private:
  net::io_context& ioc_;
  tcp::acceptor acceptor_;
  const std::string body_;
};

[[noreturn]] void usage() {
  std::fprintf(stderr, "usage: bare_beast --body-file FILE [--port N] [--threads N]\n");
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  std::string body_file;
  unsigned short port = 0;
  std::size_t threads = 2;  // HttpServerOptions::io_threads
  for (int i = 1; i < argc; ++i) {
    const bool has_value = i + 1 < argc;
    if (std::strcmp(argv[i], "--body-file") == 0 && has_value) {
      body_file = argv[++i];
    } else if (std::strcmp(argv[i], "--port") == 0 && has_value) {
      port = static_cast<unsigned short>(std::atoi(argv[++i]));
    } else if (std::strcmp(argv[i], "--threads") == 0 && has_value) {
      threads = static_cast<std::size_t>(std::max(1, std::atoi(argv[++i])));
    } else {
      usage();
    }
  }
  if (body_file.empty()) usage();
  std::ifstream in(body_file, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "bare_beast: cannot read %s\n", body_file.c_str());
    return 1;
  }
  std::string body{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};

  net::io_context ioc;
  Listener listener(ioc, tcp::endpoint(net::ip::make_address("127.0.0.1"), port), std::move(body));
  listener.accept();
  std::fprintf(stderr, "bare beast listening on http://127.0.0.1:%u\n",
               static_cast<unsigned>(listener.port()));
  std::vector<std::thread> pool;
  for (std::size_t i = 1; i < threads; ++i) pool.emplace_back([&ioc] { ioc.run(); });
  ioc.run();  // until SIGTERM/SIGKILL ends the process (bench/lib/procs.Server.stop)
  for (auto& t : pool) t.join();
}
