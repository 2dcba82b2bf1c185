// The two streams a server connection runs on: beast::tcp_stream and
// beast::ssl_stream<beast::tcp_stream>. Timeouts live on the TCP layer in both cases.
#include "transport/server/http/connection_io.hpp"

#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/ssl.hpp>

#include <type_traits>
#include <utility>

namespace mcpclass::transport::server {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;

namespace {

template <class Stream>
class StreamIo final : public ConnectionIo {
 public:
  static constexpr bool kTls = !std::is_same_v<Stream, beast::tcp_stream>;

  template <class... Args>
  explicit StreamIo(Args&&... args) : stream_(std::forward<Args>(args)...) {}

  net::any_io_executor executor() override { return stream_.get_executor(); }

  void handshake(std::chrono::milliseconds timeout,
                 std::function<void(beast::error_code)> done) override {
    if constexpr (kTls) {
      lowest().expires_after(timeout);
      stream_.async_handshake(net::ssl::stream_base::server, std::move(done));
    } else {
      (void)timeout;
      done({});
    }
  }

  void read_header(beast::flat_buffer& buffer, Parser& parser, Handler done) override {
    http::async_read_header(stream_, buffer, parser, std::move(done));
  }
  void read(beast::flat_buffer& buffer, Parser& parser, Handler done) override {
    http::async_read(stream_, buffer, parser, std::move(done));
  }
  void read_some(net::mutable_buffer buffer, Handler done) override {
    stream_.async_read_some(buffer, std::move(done));
  }
  void write(const std::vector<net::const_buffer>& buffers, Handler done) override {
    net::async_write(stream_, buffers, std::move(done));
  }

  void expires_after(std::chrono::steady_clock::duration timeout) override {
    lowest().expires_after(timeout);
  }
  void expires_never() override { lowest().expires_never(); }
  int native_handle() override { return lowest().socket().native_handle(); }

  void shutdown_send(std::function<void(beast::error_code)> done) override {
    if constexpr (kTls) {
      // close_notify; the operation completes when the peer's close_notify (or EOF) arrives.
      stream_.async_shutdown([this, done = std::move(done)](beast::error_code ec) {
        beast::error_code ignored;
        lowest().socket().shutdown(tcp::socket::shutdown_send, ignored);
        done(ec);
      });
    } else {
      beast::error_code ec;
      stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
      done(ec);
    }
  }

  void cancel() override { lowest().cancel(); }

  void close() override {
    beast::error_code ignored;
    lowest().socket().shutdown(tcp::socket::shutdown_both, ignored);
    lowest().socket().close(ignored);
  }

 private:
  beast::tcp_stream& lowest() { return beast::get_lowest_layer(stream_); }

  Stream stream_;
};

}  // namespace

std::unique_ptr<ConnectionIo> make_plain_io(tcp::socket socket) {
  return std::make_unique<StreamIo<beast::tcp_stream>>(std::move(socket));
}

std::unique_ptr<ConnectionIo> make_tls_io(tcp::socket socket, net::ssl::context& context) {
  return std::make_unique<StreamIo<beast::ssl_stream<beast::tcp_stream>>>(std::move(socket),
                                                                          context);
}

}  // namespace mcpclass::transport::server
