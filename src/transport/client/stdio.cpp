// Spawning and talking to a stdio MCP server (posix_spawn, pipes, a reader thread per output).
#include "mcpclass/transport/client/stdio.hpp"

#include "mcpclass/client/errors.hpp"
#include "mcpclass/jsonrpc/message.hpp"

#include <fmt/format.h>

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <csignal>
#include <cstring>
#include <mutex>
#include <thread>

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace mcpclass::transport::client {

namespace {

namespace json = boost::json;
using mcpclass::client::TransportError;

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

/// Writes everything (returns 0 or the errno), without dying of SIGPIPE when the child is gone:
/// SIGPIPE is blocked in this thread for the write and a pending one is consumed afterwards.
int write_all(int fd, std::string_view data) {
  sigset_t pipe_set, old_set;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_set, &old_set);
  int error = 0;
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      error = errno;
      break;
    }
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  if (error == EPIPE) {
    const timespec zero{0, 0};
    while (sigtimedwait(&pipe_set, nullptr, &zero) > 0) {
    }
  }
  pthread_sigmask(SIG_SETMASK, &old_set, nullptr);
  return error;
}

/// Reads lines from `fd` until EOF or `stop` (then drains what is buffered), polling so that a
/// stop is noticed.
template <typename OnLine>
void read_lines(int fd, const std::atomic<bool>& stop, std::size_t max_line, OnLine on_line,
                const std::function<void(std::string_view)>& on_log) {
  std::string buffer;
  bool overlong = false;
  char chunk[65536];
  for (;;) {
    // Once stopping, drain what is already buffered and leave.
    const bool stopping = stop;
    pollfd p{fd, POLLIN, 0};
    const int r = ::poll(&p, 1, stopping ? 0 : 100);
    if (r < 0 && errno != EINTR) return;
    if (r == 0 && stopping) break;
    if (r <= 0) continue;
    const ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) break;
    std::string_view data(chunk, static_cast<std::size_t>(n));
    while (!data.empty()) {
      const auto nl = data.find('\n');
      const auto piece = data.substr(0, nl);
      if (!overlong) {
        buffer.append(piece);
        if (buffer.size() > max_line) {
          overlong = true;
          buffer.clear();
          if (on_log) on_log(fmt::format("dropped a line longer than {} bytes", max_line));
        }
      }
      if (nl == std::string_view::npos) break;
      if (!overlong) on_line(buffer);
      buffer.clear();
      overlong = false;
      data.remove_prefix(nl + 1);
    }
  }
  if (!buffer.empty() && !overlong) on_line(buffer);
}

std::string describe_status(int status) {
  if (WIFEXITED(status)) return fmt::format("process exited with status {}", WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return fmt::format("process killed by signal {}", WTERMSIG(status));
  return "process ended";
}

}  // namespace

struct StdioClientTransport::Impl {
  explicit Impl(StdioClientOptions o) : options(std::move(o)) {}

  StdioClientOptions options;
  mcpclass::client::TransportHandlers handlers;

  mutable std::mutex mutex;  // state below
  std::condition_variable exited_cv;
  pid_t child = -1;
  bool running = false;
  bool reaped = true;
  std::optional<int> status;

  std::mutex write_mutex;
  int in_fd = -1;
  int out_fd = -1;
  int err_fd = -1;
  std::atomic<bool> stop{false};
  std::thread out_thread;
  std::thread err_thread;

  std::string name() const { return options.command.empty() ? "?" : options.command.front(); }

  void spawn() {
    if (options.command.empty()) throw TransportError("stdio: empty command");
    int in[2], out[2], err[2];
    if (::pipe2(in, O_CLOEXEC) != 0) throw TransportError("stdio: pipe failed");
    if (::pipe2(out, O_CLOEXEC) != 0) {
      ::close(in[0]), ::close(in[1]);
      throw TransportError("stdio: pipe failed");
    }
    if (::pipe2(err, O_CLOEXEC) != 0) {
      ::close(in[0]), ::close(in[1]), ::close(out[0]), ::close(out[1]);
      throw TransportError("stdio: pipe failed");
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, in[0], 0);
    posix_spawn_file_actions_adddup2(&actions, out[1], 1);
    posix_spawn_file_actions_adddup2(&actions, err[1], 2);
    if (!options.working_directory.empty())
      posix_spawn_file_actions_addchdir_np(&actions, options.working_directory.c_str());
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    sigset_t none, defaults;
    sigemptyset(&none);
    sigemptyset(&defaults);
    sigaddset(&defaults, SIGPIPE);
    sigaddset(&defaults, SIGTERM);
    sigaddset(&defaults, SIGINT);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setsigdefault(&attr, &defaults);
    posix_spawnattr_setpgroup(&attr, 0);
    posix_spawnattr_setflags(
        &attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);

    std::vector<std::string> env_strings;
    if (options.inherit_env)
      for (char** e = environ; *e != nullptr; ++e) {
        std::string_view kv(*e);
        if (!options.env.contains(std::string(kv.substr(0, kv.find('=')))))
          env_strings.emplace_back(kv);
      }
    for (const auto& [k, v] : options.env) env_strings.push_back(k + "=" + v);
    std::vector<char*> envp, argv;
    for (auto& s : env_strings) envp.push_back(s.data());
    envp.push_back(nullptr);
    std::vector<std::string> args = options.command;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);

    pid_t pid = -1;
    const int rc = ::posix_spawnp(&pid, argv[0], &actions, &attr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    ::close(in[0]), ::close(out[1]), ::close(err[1]);
    if (rc != 0) {
      ::close(in[1]), ::close(out[0]), ::close(err[0]);
      throw TransportError(fmt::format("stdio: cannot start '{}': {}", name(), std::strerror(rc)));
    }
    in_fd = in[1];
    out_fd = out[0];
    err_fd = err[0];
    std::lock_guard lock(mutex);
    child = pid;
    running = true;
    reaped = false;
    status.reset();
  }

  void on_stdout_line(std::string_view line) {
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) return;
    auto parsed = jsonrpc::parse_json(line);
    if (std::holds_alternative<jsonrpc::Error>(parsed)) {
      if (handlers.on_log)
        handlers.on_log(
            fmt::format("{}: ignored non-JSON stdout line: {}", name(), line.substr(0, 200)));
      return;
    }
    if (handlers.on_message) handlers.on_message(std::move(std::get<json::value>(parsed)));
  }

  void stdout_loop() {
    read_lines(
        out_fd, stop, options.max_line_bytes, [this](std::string_view l) { on_stdout_line(l); },
        handlers.on_log);
    // End of output: the server is exiting (or we are closing). Reap it.
    pid_t pid;
    {
      std::lock_guard lock(mutex);
      pid = child;
    }
    int st = 0;
    while (::waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
    std::string reason = describe_status(st);
    {
      std::lock_guard lock(mutex);
      running = false;
      reaped = true;
      child = -1;
      status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
    }
    exited_cv.notify_all();
    if (handlers.on_closed) handlers.on_closed(reason);
  }

  void stderr_loop() {
    const std::string prefix = name() + ": ";
    read_lines(err_fd, stop, 64 * 1024,
               [this, &prefix](std::string_view l) {
                 if (handlers.on_log) handlers.on_log(prefix + std::string(l));
               },
               {});
  }

  bool wait_exit(std::chrono::milliseconds timeout) {
    std::unique_lock lock(mutex);
    return exited_cv.wait_for(lock, timeout, [this] { return reaped; });
  }

  void signal_group(int sig) {
    std::lock_guard lock(mutex);
    if (!reaped && child > 0) ::kill(-child, sig);
  }

  void close() {
    {
      std::lock_guard lock(write_mutex);
      close_fd(in_fd);  // EOF on the server's stdin: the polite way to ask it to exit
    }
    if (out_thread.joinable()) {
      if (!wait_exit(options.shutdown_grace)) {
        signal_group(SIGTERM);
        if (!wait_exit(options.shutdown_grace)) {
          signal_group(SIGKILL);
          wait_exit(std::chrono::milliseconds{5'000});
        }
      }
      out_thread.join();
    }
    stop = true;
    if (err_thread.joinable()) err_thread.join();
    close_fd(out_fd);
    close_fd(err_fd);
    stop = false;
  }
};

StdioClientTransport::StdioClientTransport(StdioClientOptions options)
    : impl_(std::make_unique<Impl>(std::move(options))) {}

StdioClientTransport::~StdioClientTransport() {
  close();
}

void StdioClientTransport::start(mcpclass::client::TransportHandlers handlers) {
  close();
  impl_->handlers = std::move(handlers);
  impl_->spawn();
  impl_->out_thread = std::thread([this] { impl_->stdout_loop(); });
  impl_->err_thread = std::thread([this] { impl_->stderr_loop(); });
}

void StdioClientTransport::send(const boost::json::value& message) {
  std::string line = boost::json::serialize(message);
  line += '\n';
  std::lock_guard lock(impl_->write_mutex);
  if (impl_->in_fd < 0 || !is_open()) throw TransportError(describe() + ": not running");
  if (const int error = write_all(impl_->in_fd, line); error != 0)
    throw TransportError(describe() + ": cannot write to the server: " + std::strerror(error));
}

void StdioClientTransport::close() {
  impl_->close();
}

bool StdioClientTransport::is_open() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->running;
}

std::string StdioClientTransport::describe() const {
  return "stdio:" + impl_->name();
}

int StdioClientTransport::pid() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->running ? impl_->child : -1;
}

std::optional<int> StdioClientTransport::exit_status() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->status;
}

}  // namespace mcpclass::transport::client
