#include "route/redis_connection.hpp"

#include <fmt/format.h>
#include <pthread.h>
#include <signal.h>

#include <string>

namespace mcpclass::route {

namespace {

timeval to_timeval(std::chrono::milliseconds ms) {
  return {static_cast<time_t>(ms.count() / 1000),
          static_cast<suseconds_t>(ms.count() % 1000 * 1000)};
}

// A write to a connection Redis closed raises SIGPIPE, which would end the process: it is
// blocked on this thread while a command runs, and one it raised is taken before unblocking.
// (Per thread: the process's disposition is not the cache's to change.)
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

std::string context_error(const redisContext* c) {
  if (c == nullptr) return "cannot allocate a connection";
  return c->errstr[0] ? std::string(c->errstr) : fmt::format("I/O error {}", c->err);
}

}  // namespace

RedisConnection::RedisConnection(const RedisTarget& target, std::chrono::milliseconds timeout)
    : target_(target), timeout_(timeout) {}

RedisConnection::~RedisConnection() {
  if (context_) redisFree(context_);
}

void RedisConnection::fail(std::string why) {
  error_ = std::move(why);
  if (context_) redisFree(context_);
  context_ = nullptr;
}

bool RedisConnection::connect() {
  if (context_) return true;
  const auto tv = to_timeval(target_.connect_timeout);
  const auto& a = target_.address;
  if (a.starts_with('/')) {
    context_ = redisConnectUnixWithTimeout(a.c_str(), tv);
  } else {
    const auto colon = a.rfind(':');
    context_ =
        redisConnectWithTimeout(a.substr(0, colon).c_str(), std::stoi(a.substr(colon + 1)), tv);
  }
  if (context_ == nullptr || context_->err) {
    fail("connect: " + context_error(context_));
    return false;
  }
  if (redisSetTimeout(context_, to_timeval(timeout_)) != REDIS_OK) {
    fail("connect: " + context_error(context_));
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
  if (pipeline(handshake).empty()) {
    error_ = "handshake: " + error_;
    return false;
  }
  return true;
}

std::vector<RedisReply> RedisConnection::pipeline(const std::vector<Args>& commands) {
  if (!connect()) return {};
  const PipeGuard guard;
  for (const auto& args : commands) {
    std::vector<const char*> argv;
    std::vector<std::size_t> lengths;
    for (const auto a : args) {
      argv.push_back(a.data());
      lengths.push_back(a.size());
    }
    if (redisAppendCommandArgv(context_, static_cast<int>(argv.size()), argv.data(),
                               lengths.data()) != REDIS_OK) {
      fail(context_error(context_));
      return {};
    }
  }
  std::vector<RedisReply> replies;
  std::string refused;  // the first error reply; every reply is still read, so none is left
  for (std::size_t i = 0; i < commands.size(); ++i) {
    void* raw = nullptr;
    if (redisGetReply(context_, &raw) != REDIS_OK || raw == nullptr || context_->err) {
      if (raw) freeReplyObject(raw);
      fail(context_error(context_));
      return {};
    }
    RedisReply r(static_cast<redisReply*>(raw));
    if (r->type == REDIS_REPLY_ERROR && refused.empty())
      refused = fmt::format("{}: {}", commands[i].empty() ? "" : commands[i][0],
                            std::string_view(r->str, r->len));
    replies.push_back(std::move(r));
  }
  if (!refused.empty()) {
    fail(std::move(refused));
    return {};
  }
  return replies;
}

RedisReply RedisConnection::command(const Args& args) {
  auto replies = pipeline({args});
  return replies.empty() ? nullptr : std::move(replies[0]);
}

}  // namespace mcpclass::route
