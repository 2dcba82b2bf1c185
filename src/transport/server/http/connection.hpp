// Internal: one HTTP/1.1 connection of the server, I/O only. It reads a request's header, opens an
// Exchange for it and hands it to the front's middleware (HttpFront::admit), reads the body and
// hands the request to its handler (HttpFront::serve), then writes what the exchange queues, one
// write at a time; it keeps the timeouts, keep-alive and pipelining (the next request is read once
// the answer before it is written). Reading and closing are in connection.cpp, writing in
// connection_write.cpp, watching a client that is being answered slowly in connection_watch.cpp.
// The stream underneath (plain TCP or TLS) is a ConnectionIo: this code is the same for both.
// Thread-safety: everything a connection does runs on its strand; engine threads reach it by
// posting through the PostGate (Exchange::post).
#pragma once

#include "transport/server/http/connection_io.hpp"
#include "transport/server/http/shared.hpp"

#include <boost/asio/steady_timer.hpp>
#include <boost/beast/http.hpp>

#include <cstddef>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mcpclass::transport::server {

class Exchange;

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  /// `io_owner`: keeps the io_context of `io` alive until this connection is gone (see
  /// serve_connection). `peer`: the client's address (GET streams are limited per address).
  Connection(std::shared_ptr<boost::asio::io_context> io_owner, std::unique_ptr<ConnectionIo> io,
             std::shared_ptr<HttpShared> shared, boost::asio::ip::address peer);
  ~Connection();

  /// The io_context its I/O runs on.
  const std::shared_ptr<boost::asio::io_context>& io_context() const { return io_owner_; }

  /// The TLS handshake (if any), then the first request.
  void start();

  // --- For the exchange being served (on the strand); calls for another one are ignored. ---

  /// Queues bytes of `exchange`'s response; `last`: its last bytes (the next request is read
  /// once they are written).
  void write(const Exchange& exchange, std::string bytes, bool last);
  /// Takes `n` more body bytes into the write queue: false when bytes are still queued and these
  /// would pass kMaxQueuedBytes (a reader slower than the writer; a single large piece to a reader
  /// that keeps up passes).
  bool take_queue_room(std::size_t n);
  /// Whether nothing is queued or being written.
  bool write_idle() const { return queue_.empty(); }
  /// Queues everything `f` writes before the first of it is sent: one write, not one each.
  template <class F>
  void write_together(F&& f) {
    hold_writes_ = true;
    std::forward<F>(f)();
    hold_writes_ = false;
    if (!writing_ && !queue_.empty()) write_next();
  }
  /// While a response is pending: a read that notices the client leaving (disconnect()). With
  /// `keep_bytes`, what it reads is a pipelined request, kept (up to the read buffer's bound)
  /// for after the answer; without, the connection ends with this response and they are dropped.
  void watch_client(bool keep_bytes);
  /// A peer host that vanished never acknowledges what a long stream sends: the kernel gives up
  /// once sent data stays unacknowledged for write_timeout (TCP_USER_TIMEOUT).
  void bound_unacknowledged();
  /// Closes the connection at once; the exchange is released.
  void disconnect();

 private:
  // First, so destroyed last: the socket and timers below need their io_context's services.
  const std::shared_ptr<boost::asio::io_context> io_owner_;

  /// After the response being written: read the next request, close gracefully, or at once.
  enum class After { read, close, disconnect };

  // --- Reading and closing (connection.cpp) ---
  void do_read();
  void on_header(boost::beast::error_code ec, std::size_t);
  void on_read(boost::beast::error_code ec, std::size_t);
  /// Room in the read buffer for one read of up to `n` bytes: less (or none) as the buffer nears
  /// its bound, max_header_bytes, which caps what a peer can make it hold (a header block, a
  /// chunk-size line with its extensions, a trailer section, pipelined bytes).
  boost::asio::mutable_buffer read_room(std::size_t n);
  void on_read_error(boost::beast::error_code ec);
  std::shared_ptr<Exchange> open_exchange();
  void on_response_complete();
  void next_request();
  void release_exchange();
  void graceful_close();
  void drain();

  // --- Watching the client while it waits (connection_watch.cpp) ---
  void watch_pipelining();
  void watch_disconnect();
  /// The read buffer is full of a pipelined request: reads stop (TCP holds the rest) until the
  /// answer is written, and a timer that never expires keeps the connection alive meanwhile.
  void park_reading();
  /// Ends the watch (read or park) when the answer is written; the next request is read after.
  void stop_watching();

  // --- Writing (connection_write.cpp) ---
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
  bool closed_ = false;
  bool first_request_ = true;
  After after_ = After::read;
  /// The exchange whose response is being read or written; nullptr between requests.
  std::shared_ptr<Exchange> exchange_;

  bool writing_ = false;
  bool hold_writes_ = false;       // queueing the parts of one answer: written together after
  std::size_t writing_count_ = 0;  // queue_'s first items, in the write in progress
  std::vector<boost::asio::const_buffer> write_buffers_;
  std::deque<Out> queue_;
  std::size_t queued_bytes_ = 0;  // body bytes queued and not yet written

  bool watching_ = false;        // a read that only looks for the client's disconnect is pending
  bool resume_reading_ = false;  // ...and the exchange ended: read the next request after it
  /// Pending instead of that read once the read buffer is full (park_reading()).
  std::optional<boost::asio::steady_timer> parked_;
};

}  // namespace mcpclass::transport::server
