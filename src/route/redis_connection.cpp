#include "route/redis_connection.hpp"

#include "net/tls_context.hpp"

#include <fmt/format.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <boost/asio/ssl/error.hpp>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <string>

namespace mcpclass::route {

namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// A write to a connection Redis closed raises SIGPIPE, which would end the process: it is
// blocked on this thread while a command runs, and one it raised is taken before unblocking.
// (Per thread: the process's disposition is not the cache's to change. MSG_NOSIGNAL alone would
// not do: OpenSSL writes to the socket with write().)
class PipeGuard {
 public:
  PipeGuard() {
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_, &old_);
  }
  ~PipeGuard() {
    sigset_t pending;
    sigpending(&pending);
    if (sigismember(&pending, SIGPIPE) && !sigismember(&old_, SIGPIPE)) {
      const timespec zero{0, 0};
      sigtimedwait(&pipe_, nullptr, &zero);
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  PipeGuard(const PipeGuard&) = delete;
  PipeGuard& operator=(const PipeGuard&) = delete;

 private:
  sigset_t pipe_;
  sigset_t old_;
};

// Rounded up, so that a deadline 0.4 ms away is waited for rather than polled in a loop.
int milliseconds_left(Clock::time_point deadline) {
  const auto left = std::chrono::ceil<milliseconds>(deadline - Clock::now()).count();
  return static_cast<int>(std::clamp<long long>(left, 0, INT_MAX));
}

std::string os_error(int err) {
  return std::strerror(err);
}

// The OpenSSL error behind `ret` of an SSL_* call on `ssl`, in its own words.
boost::system::error_code tls_error(SSL* ssl, int ret) {
  const int kind = SSL_get_error(ssl, ret);
  const unsigned long queued = ERR_get_error();
  ERR_clear_error();
  if (queued != 0) return {static_cast<int>(queued), boost::asio::error::get_ssl_category()};
  if (kind == SSL_ERROR_SYSCALL && errno != 0) return {errno, boost::system::system_category()};
  return boost::asio::ssl::error::stream_truncated;
}

}  // namespace

RedisConnection::RedisConnection(const RedisTarget& target, std::chrono::milliseconds timeout)
    : target_(target), timeout_(timeout) {}

RedisConnection::~RedisConnection() {
  close();
}

// Without a TLS close_notify: it could block or meet a closed socket, and Redis needs none.
void RedisConnection::close() noexcept {
  if (ssl_) SSL_free(ssl_);
  ssl_ = nullptr;
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (reader_) redisReaderFree(reader_);
  reader_ = nullptr;
}

void RedisConnection::fail(std::string why) {
  error_ = std::move(why);
  close();
}

bool RedisConnection::wait_for(short events, Deadline deadline, const char* doing) {
  for (;;) {
    pollfd p{fd_, events, 0};
    const int n = ::poll(&p, 1, milliseconds_left(deadline));
    if (n > 0) return true;  // an error or a hang-up too: the next call says which
    if (n == 0) {
      fail(fmt::format("{}: timed out", doing));
      return false;
    }
    if (errno != EINTR) {
      fail(fmt::format("{}: poll: {}", doing, os_error(errno)));
      return false;
    }
  }
}

// A non-blocking socket to the address, connected by the deadline: the first of the host's
// addresses that accepts.
bool RedisConnection::open_socket(Deadline deadline) {
  const auto& a = target_.address;
  if (a.starts_with('/')) {
    sockaddr_un un{};
    un.sun_family = AF_UNIX;
    if (a.size() >= sizeof(un.sun_path)) {
      fail("connect: the socket path is too long");
      return false;
    }
    std::memcpy(un.sun_path, a.data(), a.size());
    // Connected at once or refused (EAGAIN: Redis's backlog is full): nothing to wait for.
    fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd_ < 0 || ::connect(fd_, reinterpret_cast<sockaddr*>(&un), sizeof(un)) != 0) {
      fail("connect: " + os_error(errno));
      return false;
    }
    return true;
  }
  const auto colon = a.rfind(':');
  std::string host = a.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  const std::string port = a.substr(colon + 1);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (const int rc = ::getaddrinfo(host.c_str(), port.c_str(), &hints, &found); rc != 0) {
    fail(fmt::format("connect: cannot resolve {}: {}", host, gai_strerror(rc)));
    return false;
  }
  std::string why = "no address";
  for (const addrinfo* ai = found; ai != nullptr; ai = ai->ai_next) {
    fd_ = ::socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd_ < 0) {
      why = os_error(errno);
      continue;
    }
    int err = ::connect(fd_, ai->ai_addr, ai->ai_addrlen) == 0 ? 0 : errno;
    if (err == EINPROGRESS) {
      if (!wait_for(POLLOUT, deadline, "connect")) {
        ::freeaddrinfo(found);
        return false;  // the deadline is the whole connect's: no next address
      }
      socklen_t len = sizeof(err);
      if (::getsockopt(fd_, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
    }
    if (err == 0) break;
    why = os_error(err);
    ::close(fd_);
    fd_ = -1;
  }
  ::freeaddrinfo(found);
  if (fd_ < 0) {
    fail("connect: " + why);
    return false;
  }
  const int one = 1;  // commands are small and answered at once: no Nagle delay
  ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  return true;
}

bool RedisConnection::tls_handshake(Deadline deadline) {
  ssl_ = SSL_new(target_.tls.get());
  if (ssl_ == nullptr || SSL_set_fd(ssl_, fd_) != 1) {
    ERR_clear_error();
    fail("connect: cannot start TLS");
    return false;
  }
  try {
    net::expect_peer_name(ssl_, target_.server_name);
  } catch (const std::exception& e) {
    fail(std::string("connect: ") + e.what());
    return false;
  }
  for (;;) {
    ERR_clear_error();
    errno = 0;
    const int ret = SSL_connect(ssl_);
    if (ret == 1) return true;
    const int kind = SSL_get_error(ssl_, ret);
    if (kind == SSL_ERROR_WANT_READ || kind == SSL_ERROR_WANT_WRITE) {
      if (!wait_for(kind == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, deadline, "TLS handshake"))
        return false;
      continue;
    }
    const auto ec = tls_error(ssl_, ret);
    fail(net::tls_handshake_failure(ssl_, ec, target_.server_name));
    return false;
  }
}

bool RedisConnection::connect() {
  if (fd_ >= 0) return true;
  const PipeGuard guard;
  const Deadline deadline = Clock::now() + target_.connect_timeout;
  if (!open_socket(deadline)) return false;
  if (target_.tls && !tls_handshake(deadline)) return false;
  reader_ = redisReaderCreate();
  if (reader_ == nullptr) {
    fail("connect: cannot allocate a reply reader");
    return false;
  }
  // The handshake: its failure (WRONGPASS, an unknown database) is the connection's.
  std::vector<Args> handshake;
  const std::string database = std::to_string(target_.database);
  if (!target_.password.empty()) {
    if (target_.username.empty())
      handshake.push_back({"AUTH", target_.password});
    else
      handshake.push_back({"AUTH", target_.username, target_.password});
  }
  if (target_.database != 0) handshake.push_back({"SELECT", database});
  if (handshake.empty()) return true;
  if (round_trip(handshake, Clock::now() + timeout_).empty()) {
    error_ = "handshake: " + error_;
    return false;
  }
  return true;
}

bool RedisConnection::send_all(std::string_view bytes, Deadline deadline) {
  while (!bytes.empty()) {
    if (ssl_) {
      ERR_clear_error();
      errno = 0;
      // All or nothing (no partial writes): a retry passes the same bytes, as OpenSSL needs.
      const int n = SSL_write(ssl_, bytes.data(),
                              static_cast<int>(std::min<std::size_t>(bytes.size(), INT_MAX)));
      if (n > 0) {
        bytes.remove_prefix(static_cast<std::size_t>(n));
        continue;
      }
      const int kind = SSL_get_error(ssl_, n);
      if (kind == SSL_ERROR_WANT_READ || kind == SSL_ERROR_WANT_WRITE) {
        if (!wait_for(kind == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, deadline, "write"))
          return false;
        continue;
      }
      fail("write: " + tls_error(ssl_, n).message());
      return false;
    }
    const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n > 0) {
      bytes.remove_prefix(static_cast<std::size_t>(n));
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (!wait_for(POLLOUT, deadline, "write")) return false;
    } else if (n < 0 && errno != EINTR) {
      fail("write: " + os_error(errno));
      return false;
    }
  }
  return true;
}

std::size_t RedisConnection::receive(char* buffer, std::size_t size, Deadline deadline) {
  for (;;) {
    if (ssl_) {
      ERR_clear_error();
      errno = 0;
      const int n = SSL_read(ssl_, buffer, static_cast<int>(std::min<std::size_t>(size, INT_MAX)));
      if (n > 0) return static_cast<std::size_t>(n);
      const int kind = SSL_get_error(ssl_, n);
      if (kind == SSL_ERROR_WANT_READ || kind == SSL_ERROR_WANT_WRITE) {
        if (!wait_for(kind == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, deadline, "read")) return 0;
        continue;
      }
      if (kind == SSL_ERROR_ZERO_RETURN) {
        ERR_clear_error();
        fail("Server closed the connection");
      } else {
        fail("read: " + tls_error(ssl_, n).message());
      }
      return 0;
    }
    const ssize_t n = ::recv(fd_, buffer, size, 0);
    if (n > 0) return static_cast<std::size_t>(n);
    if (n == 0) {
      fail("Server closed the connection");  // hiredis's words, which the logs had
      return 0;
    }
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      if (!wait_for(POLLIN, deadline, "read")) return 0;
    } else if (errno != EINTR) {
      fail("read: " + os_error(errno));
      return 0;
    }
  }
}

std::vector<RedisReply> RedisConnection::round_trip(const std::vector<Args>& commands,
                                                    Deadline deadline) {
  std::string out;
  for (const auto& args : commands) {
    std::vector<const char*> argv;
    std::vector<std::size_t> lengths;
    for (const auto a : args) {
      argv.push_back(a.data());
      lengths.push_back(a.size());
    }
    char* encoded = nullptr;
    const int n = redisFormatCommandArgv(&encoded, static_cast<int>(argv.size()), argv.data(),
                                         lengths.data());
    if (n < 0 || encoded == nullptr) {
      fail("cannot encode a command");
      return {};
    }
    out.append(encoded, static_cast<std::size_t>(n));
    redisFreeCommand(encoded);
  }
  if (!send_all(out, deadline)) return {};
  std::vector<RedisReply> replies;
  std::string refused;  // the first error reply; every reply is still read, so none is left
  char buffer[16 * 1024];
  while (replies.size() < commands.size()) {
    void* raw = nullptr;
    if (redisReaderGetReply(reader_, &raw) != REDIS_OK) {
      fail(fmt::format("protocol error: {}", reader_->errstr));
      return {};
    }
    if (raw == nullptr) {
      const std::size_t n = receive(buffer, sizeof(buffer), deadline);
      if (n == 0) return {};
      if (redisReaderFeed(reader_, buffer, n) != REDIS_OK) {
        fail(fmt::format("protocol error: {}", reader_->errstr));
        return {};
      }
      continue;
    }
    RedisReply r(static_cast<redisReply*>(raw));
    const auto& args = commands[replies.size()];
    if (r->type == REDIS_REPLY_ERROR && refused.empty())
      refused =
          fmt::format("{}: {}", args.empty() ? "" : args[0], std::string_view(r->str, r->len));
    replies.push_back(std::move(r));
  }
  if (!refused.empty()) {
    fail(std::move(refused));
    return {};
  }
  return replies;
}

std::vector<RedisReply> RedisConnection::pipeline(const std::vector<Args>& commands) {
  if (!connect()) return {};
  const PipeGuard guard;
  return round_trip(commands, Clock::now() + timeout_);
}

RedisReply RedisConnection::command(const Args& args) {
  auto replies = pipeline({args});
  return replies.empty() ? nullptr : std::move(replies[0]);
}

}  // namespace mcpclass::route
