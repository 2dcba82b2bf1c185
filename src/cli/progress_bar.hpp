// Internal: the one-line progress bar every long CLI step draws on stderr (embedding, indexing,
// classifying, loading a checkpoint, training a head): label, bar, counts, an optional detail
// (a training loss) and the time left, estimated from the rate so far.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace mcpclass::cli {

/// On a terminal the line is redrawn in place at most 10 times a second; otherwise (a log, a
/// pipe) one line is written per tenth done, so a log shows the step moving without flooding.
/// Thread-safety: one thread at a time (a step reports from the thread that runs it).
class ProgressBar {
 public:
  enum class Units { count, bytes };

  explicit ProgressBar(std::string label, Units units = Units::count);

  /// `done` of `total`; `detail` follows the counts (e.g. "loss 0.4123").
  void update(std::size_t done, std::size_t total, std::string_view detail = {});

 private:
  std::string label_;
  Units units_;
  bool tty_;
  std::chrono::steady_clock::time_point start_, last_{};
  std::size_t last_tenth_ = 0;
};

/// A (done, total) callback drawing a ProgressBar, for the library's progress parameters.
std::function<void(std::size_t, std::size_t)> progress_bar(
    std::string label, ProgressBar::Units units = ProgressBar::Units::count);

}  // namespace mcpclass::cli
