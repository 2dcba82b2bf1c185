// Watches the files a configuration is made of (the document and the model files it names) with
// inotify, and calls back once they have been quiet for a debounce interval: `serve` reloads then.
// Directories are watched, not the files, so editors that replace a file by renaming and
// Kubernetes ConfigMap volumes (a `..data` symlink swapped in) are seen too.
// Thread-safety: watch() may be called from any thread, including from the callback; the callback
// runs on the watcher's own thread. The destructor stops and joins that thread.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace mcpclass::cli {

class ConfigWatcher {
 public:
  /// Throws std::runtime_error when inotify is unavailable.
  ConfigWatcher(std::chrono::milliseconds debounce, std::function<void()> changed);
  ~ConfigWatcher();
  ConfigWatcher(const ConfigWatcher&) = delete;
  ConfigWatcher& operator=(const ConfigWatcher&) = delete;

  /// Replaces the watched set. Files that do not exist yet are watched for (their directory must).
  void watch(const std::vector<std::string>& files);

 private:
  void run();

  std::chrono::milliseconds debounce_;
  std::function<void()> changed_;
  int inotify_fd_ = -1;
  int stop_pipe_[2] = {-1, -1};
  std::mutex mutex_;
  std::map<int, std::string> directories_;              // watch descriptor → directory
  std::map<std::string, std::set<std::string>> names_;  // directory → file names in it
  std::thread thread_;
};

}  // namespace mcpclass::cli
