// The stream a server connection runs on: beast::tcp_stream.
#include "transport/http_connection_io.hpp"

#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http/read.hpp>

#include <utility>

namespace mcpclass::transport {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;

namespace {

class PlainIo final : public ConnectionIo {
 public:
  explicit PlainIo(tcp::socket socket) : stream_(std::move(socket)) {}

  net::any_io_executor executor() override { return stream_.get_executor(); }

  void handshake(std::chrono::milliseconds, std::function<void(beast::error_code)> done) override {
    done({});
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
  void write(net::const_buffer buffer, Handler done) override {
    net::async_write(stream_, buffer, std::move(done));
  }

  void expires_after(std::chrono::steady_clock::duration timeout) override {
    stream_.expires_after(timeout);
  }
  void expires_never() override { stream_.expires_never(); }

  void shutdown_send(std::function<void(beast::error_code)> done) override {
    beast::error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
    done(ec);
  }

  void close() override {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
    stream_.socket().close(ignored);
  }

 private:
  beast::tcp_stream stream_;
};

}  // namespace

std::unique_ptr<ConnectionIo> make_plain_io(tcp::socket socket) {
  return std::make_unique<PlainIo>(std::move(socket));
}

}  // namespace mcpclass::transport
