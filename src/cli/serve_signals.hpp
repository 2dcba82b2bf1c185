// The signals of `mcpclass serve`: SIGINT and SIGTERM mean "drain and stop" (once), SIGHUP means
// "reload the configuration" (each time). The handlers only write the signal number to a
// self-pipe (async-signal-safe, and correct whichever thread the kernel picks, including threads
// libraries started before main); a dedicated thread reads it and acts.
// Thread-safety: trigger(), wait(), read_fd() and on_hangup() may be called from any thread. One
// instance per process (it owns the handlers); the destructor restores the previous ones.
#pragma once

#include <signal.h>

#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace mcpclass::cli {

class ServeSignals {
 public:
  ServeSignals();
  ~ServeSignals();
  ServeSignals(const ServeSignals&) = delete;
  ServeSignals& operator=(const ServeSignals&) = delete;

  /// Starts the shutdown (logged with `why`); later calls do nothing.
  void trigger(const std::string& why);
  /// Blocks until trigger().
  void wait();
  /// Readable once trigger() has run: lets a poll loop (stdio) stop.
  int read_fd() const { return pipe_[0]; }
  /// What SIGHUP runs, on the signal thread; empty (the default) ignores SIGHUP. Returns once a
  /// reload already running has finished, so on_hangup({}) makes the callback's state free to go.
  /// Must not be called from the callback.
  void on_hangup(std::function<void()> reload);

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
  struct sigaction old_hup_ {};
  int pipe_[2] = {-1, -1};
  std::thread waiter_;
  std::mutex mutex_;
  std::mutex running_;  // held while the SIGHUP callback runs
  std::condition_variable cv_;
  bool fired_ = false;
  std::function<void()> reload_;
};

}  // namespace mcpclass::cli
