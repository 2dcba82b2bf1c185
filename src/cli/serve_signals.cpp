#include "cli/serve_signals.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <stdexcept>

namespace mcpclass::cli {

namespace {

int g_signal_pipe[2] = {-1, -1};

extern "C" void on_serve_signal(int signal) {
  const int saved = errno;
  const char byte = static_cast<char>(signal);
  [[maybe_unused]] auto n = ::write(g_signal_pipe[1], &byte, 1);
  errno = saved;
}

}  // namespace

ServeSignals::ServeSignals() {
  if (::pipe(g_signal_pipe) != 0 || ::pipe(pipe_) != 0) throw std::runtime_error("pipe() failed");
  struct sigaction action {};
  action.sa_handler = on_serve_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  ::sigaction(SIGINT, &action, &old_int_);
  ::sigaction(SIGTERM, &action, &old_term_);
  ::sigaction(SIGHUP, &action, &old_hup_);
  waiter_ = std::thread([this] {
    for (;;) {
      char byte = 0;
      ssize_t n;
      do {
        n = ::read(g_signal_pipe[0], &byte, 1);
      } while (n < 0 && errno == EINTR);
      if (n != 1 || byte == 0) return;  // a 0 byte: the destructor's wake-up
      if (byte == SIGHUP) {
        std::lock_guard running(running_);
        std::function<void()> reload;
        {
          std::lock_guard lock(mutex_);
          reload = reload_;
        }
        if (reload) reload();
        continue;
      }
      trigger(fmt::format("signal {}", static_cast<int>(byte)));
    }
  });
}

ServeSignals::~ServeSignals() {
  const char byte = 0;
  [[maybe_unused]] auto n = ::write(g_signal_pipe[1], &byte, 1);
  waiter_.join();
  ::sigaction(SIGINT, &old_int_, nullptr);
  ::sigaction(SIGTERM, &old_term_, nullptr);
  ::sigaction(SIGHUP, &old_hup_, nullptr);
  for (int fd : {g_signal_pipe[0], g_signal_pipe[1], pipe_[0], pipe_[1]}) ::close(fd);
  g_signal_pipe[0] = g_signal_pipe[1] = -1;
}

void ServeSignals::trigger(const std::string& why) {
  std::lock_guard lock(mutex_);
  if (fired_) return;
  fired_ = true;
  fmt::print(stderr, "mcpclass: {}: draining and stopping\n", why);
  const char byte = 1;
  [[maybe_unused]] auto n = ::write(pipe_[1], &byte, 1);
  cv_.notify_all();
}

void ServeSignals::wait() {
  std::unique_lock lock(mutex_);
  cv_.wait(lock, [&] { return fired_; });
}

void ServeSignals::on_hangup(std::function<void()> reload) {
  {
    std::lock_guard lock(mutex_);
    reload_ = std::move(reload);
  }
  std::lock_guard running(running_);  // a reload already under way finishes first
}

}  // namespace mcpclass::cli
