// Internal: one connection to Redis, as the route's cache and conversations use it
// (redis_pool.hpp): a TCP or Unix socket of its own, over TLS when the target has a context
// (OpenSSL; Debian's hiredis has no TLS), with hiredis only encoding the commands and parsing
// the replies; connected with its handshakes (TLS, then AUTH with the ACL user and password and
// SELECT of the database), commands sent pipelined, every wait bounded by a deadline (poll), and
// any failure — a refused connection, a timeout, a refused certificate, an error reply such as
// NOAUTH or WRONGTYPE — reported with Redis's (or OpenSSL's) own words and the connection
// dropped, so that the next use starts afresh after the caller's backoff.
// Thread-safety: none; one thread at a time (the pool hands each to one command).
#pragma once

#include <hiredis/hiredis.h>
#include <hiredis/read.h>

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

struct ssl_st;
struct ssl_ctx_st;

namespace mcpclass::route {

/// Where Redis is and who this instance is to it, with its secrets resolved. Plain value.
struct RedisTarget {
  std::string address;  ///< "host:port" or an absolute Unix socket path
  std::string username;
  std::string password;
  int database = 0;
  std::chrono::milliseconds connect_timeout{200};  ///< the connect and the TLS handshake
  /// TLS when set (its trust and client certificate), expecting Redis's certificate to name
  /// `server_name`. Shared, read-only, by the connections.
  std::shared_ptr<ssl_ctx_st> tls{};
  std::string server_name{};
};

struct RedisReplyFree {
  void operator()(redisReply* r) const { freeReplyObject(r); }
};
using RedisReply = std::unique_ptr<redisReply, RedisReplyFree>;

class RedisConnection {
 public:
  using Args = std::vector<std::string_view>;

  RedisConnection(const RedisTarget& target, std::chrono::milliseconds timeout);
  ~RedisConnection();
  RedisConnection(const RedisConnection&) = delete;
  RedisConnection& operator=(const RedisConnection&) = delete;

  /// Connects and runs the handshake unless connected. False (with error()) when either failed.
  bool connect();
  bool connected() const noexcept { return fd_ >= 0; }
  /// The replies of `commands`, sent together (one round trip, all within the timeout). Empty
  /// when the connection failed or any reply was an error reply: error() says which, and the
  /// connection is dropped.
  std::vector<RedisReply> pipeline(const std::vector<Args>& commands);
  /// The one reply of `args`, or null as pipeline() fails.
  RedisReply command(const Args& args);
  /// Why the last connect() or pipeline() failed.
  const std::string& error() const noexcept { return error_; }

 private:
  using Deadline = std::chrono::steady_clock::time_point;

  void fail(std::string why);
  void close() noexcept;
  bool open_socket(Deadline deadline);
  bool tls_handshake(Deadline deadline);
  std::vector<RedisReply> round_trip(const std::vector<Args>& commands, Deadline deadline);
  bool send_all(std::string_view bytes, Deadline deadline);
  /// Up to `size` bytes into `buffer` (at least one), or 0 with error_ set.
  std::size_t receive(char* buffer, std::size_t size, Deadline deadline);
  bool wait_for(short events, Deadline deadline, const char* doing);

  const RedisTarget& target_;
  const std::chrono::milliseconds timeout_;
  int fd_ = -1;
  ssl_st* ssl_ = nullptr;
  redisReader* reader_ = nullptr;
  std::string error_;
};

}  // namespace mcpclass::route
