// Internal: the byte stream under a server connection, plain TCP or TLS, behind one interface so
// the connection code is the same for both (Connection never sees the stream type).
// Thread-safety: like the stream it wraps; used only on the connection's strand.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <vector>

namespace boost::asio::ssl {
class context;
}

namespace mcpclass::transport::server {

class ConnectionIo {
 public:
  using Handler = std::function<void(boost::beast::error_code, std::size_t)>;
  using Parser = boost::beast::http::request_parser<boost::beast::http::string_body>;

  virtual ~ConnectionIo() = default;

  /// The connection's strand.
  virtual boost::asio::any_io_executor executor() = 0;
  /// TLS: the server handshake, bounded by `timeout`; plain TCP: nothing. Then `done`.
  virtual void handshake(std::chrono::milliseconds timeout,
                         std::function<void(boost::beast::error_code)> done) = 0;

  virtual void read_header(boost::beast::flat_buffer& buffer, Parser& parser, Handler done) = 0;
  virtual void read(boost::beast::flat_buffer& buffer, Parser& parser, Handler done) = 0;
  virtual void read_some(boost::asio::mutable_buffer buffer, Handler done) = 0;
  /// Writes all of `buffers` (which must stay valid until `done`).
  virtual void write(const std::vector<boost::asio::const_buffer>& buffers, Handler done) = 0;

  /// Deadline of the operations started from now on (the socket is closed when it passes).
  virtual void expires_after(std::chrono::steady_clock::duration timeout) = 0;
  virtual void expires_never() = 0;

  /// Ends our side of the stream (TLS: close_notify, then FIN); later reads still see what the
  /// peer sends until it closes. Then `done`.
  virtual void shutdown_send(std::function<void(boost::beast::error_code)> done) = 0;
  /// Cancels the pending operations (they complete with operation_aborted); the stream stays
  /// usable.
  virtual void cancel() = 0;
  /// Closes the socket at once.
  virtual void close() = 0;
  /// The TCP socket's descriptor (socket options).
  virtual int native_handle() = 0;
};

/// Plain HTTP on `socket` (which uses a strand executor).
std::unique_ptr<ConnectionIo> make_plain_io(boost::asio::ip::tcp::socket socket);
/// HTTPS on `socket` with `context` (a server context that outlives the connection).
std::unique_ptr<ConnectionIo> make_tls_io(boost::asio::ip::tcp::socket socket,
                                          boost::asio::ssl::context& context);

}  // namespace mcpclass::transport::server
