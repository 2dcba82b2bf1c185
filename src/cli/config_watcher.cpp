#include "cli/config_watcher.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <filesystem>
#include <stdexcept>

namespace mcpclass::cli {

namespace fs = std::filesystem;

namespace {

constexpr std::uint32_t kEvents =
    IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE | IN_DELETE | IN_ATTRIB | IN_MOVED_FROM;

}  // namespace

ConfigWatcher::ConfigWatcher(std::chrono::milliseconds debounce, std::function<void()> changed)
    : debounce_(debounce), changed_(std::move(changed)) {
  inotify_fd_ = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (inotify_fd_ < 0) throw std::runtime_error("inotify_init1 failed");
  if (::pipe2(stop_pipe_, O_CLOEXEC) != 0) {
    ::close(inotify_fd_);
    throw std::runtime_error("pipe2 failed");
  }
  thread_ = std::thread([this] { run(); });
}

ConfigWatcher::~ConfigWatcher() {
  const char byte = 1;
  [[maybe_unused]] auto n = ::write(stop_pipe_[1], &byte, 1);
  thread_.join();
  for (int fd : {inotify_fd_, stop_pipe_[0], stop_pipe_[1]}) ::close(fd);
}

void ConfigWatcher::watch(const std::vector<std::string>& files) {
  std::map<std::string, std::set<std::string>> wanted;
  for (const auto& file : files) {
    if (file.empty()) continue;
    const fs::path path = fs::absolute(file).lexically_normal();
    wanted[path.parent_path().string()].insert(path.filename().string());
  }
  std::lock_guard lock(mutex_);
  for (auto it = directories_.begin(); it != directories_.end();) {
    if (wanted.count(it->second) == 0) {
      ::inotify_rm_watch(inotify_fd_, it->first);
      it = directories_.erase(it);
    } else {
      ++it;
    }
  }
  for (const auto& [directory, names] : wanted) {
    const int wd = ::inotify_add_watch(inotify_fd_, directory.c_str(), kEvents);
    if (wd >= 0) directories_[wd] = directory;
  }
  names_ = std::move(wanted);
}

void ConfigWatcher::run() {
  bool pending = false;  // a change seen, the callback not yet run
  auto due = std::chrono::steady_clock::time_point::max();
  alignas(inotify_event) std::array<char, 16 * 1024> buffer{};
  for (;;) {
    int timeout = -1;
    if (pending) {
      const auto left =
          std::chrono::ceil<std::chrono::milliseconds>(due - std::chrono::steady_clock::now());
      timeout = static_cast<int>(std::max<std::chrono::milliseconds::rep>(0, left.count()));
    }
    std::array<pollfd, 2> fds{{{inotify_fd_, POLLIN, 0}, {stop_pipe_[0], POLLIN, 0}}};
    const int ready = ::poll(fds.data(), fds.size(), timeout);
    if (ready < 0 && errno != EINTR) return;
    if (fds[1].revents != 0) return;
    if (ready > 0 && (fds[0].revents & POLLIN) != 0) {
      ssize_t n;
      while ((n = ::read(inotify_fd_, buffer.data(), buffer.size())) > 0) {
        std::lock_guard lock(mutex_);
        for (ssize_t at = 0; at < n;) {
          const auto* event = reinterpret_cast<const inotify_event*>(buffer.data() + at);
          at += static_cast<ssize_t>(sizeof(inotify_event) + event->len);
          const auto dir = directories_.find(event->wd);
          if (dir == directories_.end() || event->len == 0) continue;
          const std::string name(event->name);
          // `..data` and friends: a Kubernetes volume swapping in a new version of every file.
          if (names_[dir->second].count(name) != 0 || name.starts_with("..")) {
            pending = true;
            due = std::chrono::steady_clock::now() + debounce_;
          }
        }
      }
      continue;
    }
    if (pending && std::chrono::steady_clock::now() >= due) {
      pending = false;
      changed_();
    }
  }
}

}  // namespace mcpclass::cli
