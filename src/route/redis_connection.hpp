// Internal: one hiredis connection to Redis, as the route's cache and conversations use it
// (redis_pool.hpp): connected with its handshake (AUTH with the ACL user and password, SELECT of
// the database), commands sent pipelined, and any failure — a refused connection, a timeout, an
// error reply such as NOAUTH or WRONGTYPE — reported with Redis's own words and the connection
// dropped, so that the next use starts afresh after the caller's backoff.
// Thread-safety: none; one thread at a time (the pool hands each to one command).
#pragma once

#include <hiredis/hiredis.h>

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace mcpclass::route {

/// Where Redis is and who this instance is to it, with its secrets resolved. Plain value.
struct RedisTarget {
  std::string address;  ///< "host:port" or an absolute Unix socket path
  std::string username;
  std::string password;
  int database = 0;
  std::chrono::milliseconds connect_timeout{200};
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
  bool connected() const noexcept { return context_ != nullptr; }
  /// The replies of `commands`, sent together (one round trip). Empty when the connection failed
  /// or any reply was an error reply: error() says which, and the connection is dropped.
  std::vector<RedisReply> pipeline(const std::vector<Args>& commands);
  /// The one reply of `args`, or null as pipeline() fails.
  RedisReply command(const Args& args);
  /// Why the last connect() or pipeline() failed.
  const std::string& error() const noexcept { return error_; }

 private:
  void fail(std::string why);

  const RedisTarget& target_;
  const std::chrono::milliseconds timeout_;
  redisContext* context_ = nullptr;
  std::string error_;
};

}  // namespace mcpclass::route
