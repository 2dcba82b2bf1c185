#include "cli/progress_bar.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <memory>

namespace mcpclass::cli {

namespace {

std::string amount(std::size_t n, ProgressBar::Units units) {
  if (units == ProgressBar::Units::count) return std::to_string(n);
  return fmt::format("{:.1f} MB", static_cast<double>(n) / 1e6);
}

std::string time_left(double seconds) {
  const auto s = static_cast<long long>(seconds + 0.5);
  if (s >= 3600) return fmt::format("{}h{:02}m left", s / 3600, s % 3600 / 60);
  if (s >= 60) return fmt::format("{}m{:02}s left", s / 60, s % 60);
  return fmt::format("{}s left", s);
}

}  // namespace

ProgressBar::ProgressBar(std::string label, Units units)
    : label_(std::move(label)),
      units_(units),
      tty_(::isatty(::fileno(stderr)) != 0),
      start_(std::chrono::steady_clock::now()) {}

void ProgressBar::update(std::size_t done, std::size_t total, std::string_view detail) {
  const auto now = std::chrono::steady_clock::now();
  if (tty_ && done < total && now - last_ < std::chrono::milliseconds(100)) return;
  const std::size_t tenth = total == 0 ? 10 : 10 * done / total;
  if (!tty_ && tenth == last_tenth_ && done < total) return;
  last_ = now;
  last_tenth_ = tenth;
  constexpr int kWidth = 30;
  const int filled = total == 0 ? kWidth : static_cast<int>(kWidth * done / total);
  std::string tail;
  if (!detail.empty()) tail += ", " + std::string(detail);
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  if (done > 0 && done < total && elapsed >= 1.0)
    tail +=
        ", " + time_left(elapsed * static_cast<double>(total - done) / static_cast<double>(done));
  // The trailing spaces clear what a longer previous line left on a terminal.
  fmt::print(stderr, "{}{} [{}{}] {}/{}{}{}", tty_ ? "\r" : "", label_,
             std::string(static_cast<std::size_t>(filled), '#'),
             std::string(static_cast<std::size_t>(kWidth - filled), '.'), amount(done, units_),
             amount(total, units_), tail, tty_ ? "    " : "\n");
  if (tty_ && done >= total) fmt::print(stderr, "\n");
}

std::function<void(std::size_t, std::size_t)> progress_bar(std::string label,
                                                           ProgressBar::Units units) {
  auto bar = std::make_shared<ProgressBar>(std::move(label), units);
  return [bar](std::size_t done, std::size_t total) { bar->update(done, total); };
}

}  // namespace mcpclass::cli
