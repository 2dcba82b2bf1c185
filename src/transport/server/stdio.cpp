#include "mcpclass/transport/server/stdio.hpp"

#include "mcpclass/jsonrpc/message.hpp"
#include "mcpclass/server/session.hpp"

#include <fmt/format.h>
#include <poll.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <mutex>
#include <string>

namespace mcpclass::transport::server {

namespace json = boost::json;

namespace {

// Writes whole lines to a file descriptor; counts the requests still open.
class LineWriter {
 public:
  LineWriter(int fd, std::shared_ptr<StdioCounters> counters)
      : fd_(fd), counters_(std::move(counters)) {}

  void write(const json::value& message) {
    std::string line = json::serialize(message);
    line.push_back('\n');
    if (counters_) {
      counters_->messages_out.fetch_add(1, std::memory_order_relaxed);
      counters_->bytes_out.fetch_add(line.size(), std::memory_order_relaxed);
    }
    std::lock_guard lock(mutex_);
    std::size_t done = 0;
    while (done < line.size() && !failed_) {
      const ssize_t n = ::write(fd_, line.data() + done, line.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        failed_ = true;
        break;
      }
      done += static_cast<std::size_t>(n);
    }
  }

  bool failed() const {
    std::lock_guard lock(mutex_);
    return failed_;
  }

  void opened() {
    std::lock_guard lock(mutex_);
    ++open_;
  }
  void closed() {
    std::lock_guard lock(mutex_);
    --open_;
    idle_.notify_all();
  }
  /// Waits until no request is open, or the deadline passes. Returns whether all closed.
  bool wait_idle(std::chrono::milliseconds timeout) {
    std::unique_lock lock(mutex_);
    return idle_.wait_for(lock, timeout, [&] { return open_ == 0; });
  }

 private:
  int fd_;
  std::shared_ptr<StdioCounters> counters_;
  mutable std::mutex mutex_;
  std::condition_variable idle_;
  std::size_t open_ = 0;
  bool failed_ = false;
};

class LineStream final : public mcpclass::server::Stream {
 public:
  LineStream(std::shared_ptr<LineWriter> writer, bool tracked)
      : writer_(std::move(writer)), tracked_(tracked) {
    if (tracked_) writer_->opened();
  }
  void send(json::value message) override { writer_->write(message); }
  void close(std::optional<json::value> final_message) override {
    if (final_message) writer_->write(*final_message);
    if (tracked_) writer_->closed();
  }

 private:
  std::shared_ptr<LineWriter> writer_;
  bool tracked_;
};

}  // namespace

std::string StdioCounters::prometheus() const {
  return fmt::format(
      "# HELP mcpclass_stdio_messages_total JSON-RPC lines on stdio transports, by direction.\n"
      "# TYPE mcpclass_stdio_messages_total counter\n"
      "mcpclass_stdio_messages_total{{direction=\"in\"}} {}\n"
      "mcpclass_stdio_messages_total{{direction=\"out\"}} {}\n"
      "# HELP mcpclass_stdio_bytes_total Bytes on stdio transports, by direction.\n"
      "# TYPE mcpclass_stdio_bytes_total counter\n"
      "mcpclass_stdio_bytes_total{{direction=\"in\"}} {}\n"
      "mcpclass_stdio_bytes_total{{direction=\"out\"}} {}\n"
      "# HELP mcpclass_stdio_oversized_lines_total Lines over max_line_bytes, refused.\n"
      "# TYPE mcpclass_stdio_oversized_lines_total counter\n"
      "mcpclass_stdio_oversized_lines_total {}\n",
      messages_in.load(), messages_out.load(), bytes_in.load(), bytes_out.load(), oversized.load());
}

int serve_stdio(const std::shared_ptr<mcpclass::server::Server>& server, int in_fd, int out_fd,
                StdioOptions options) {
  auto writer = std::make_shared<LineWriter>(out_fd, options.counters);
  StdioCounters* counters = options.counters.get();
  auto session = server->create_session();
  session->set_notification_stream(std::make_shared<LineStream>(writer, false));

  auto deliver = [&](std::string_view line) {
    if (counters != nullptr) {
      counters->messages_in.fetch_add(1, std::memory_order_relaxed);
      counters->bytes_in.fetch_add(line.size() + 1, std::memory_order_relaxed);
    }
    session->handle(line, std::make_shared<LineStream>(writer, true));
  };

  std::string line;
  bool oversized = false;
  char buffer[64 * 1024];
  for (;;) {
    if (options.stop_fd >= 0) {
      pollfd fds[2] = {{in_fd, POLLIN, 0}, {options.stop_fd, POLLIN, 0}};
      const int ready = ::poll(fds, 2, -1);
      if (ready < 0 && errno == EINTR) continue;
      if (ready < 0 || fds[1].revents != 0) break;
    }
    const ssize_t n = ::read(in_fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    for (ssize_t i = 0; i < n; ++i) {
      const char c = buffer[i];
      if (c != '\n') {
        if (oversized) continue;
        if (line.size() >= options.max_line_bytes) {
          oversized = true;
          line.clear();
          continue;
        }
        line.push_back(c);
        continue;
      }
      if (oversized) {
        if (counters != nullptr) counters->oversized.fetch_add(1, std::memory_order_relaxed);
        writer->write(jsonrpc::make_error(
            std::nullopt,
            {jsonrpc::kParseError, fmt::format("Parse error: message exceeds the limit of {} bytes",
                                               options.max_line_bytes)}));
        oversized = false;
      } else if (line.find_first_not_of(" \t\r") != std::string::npos) {
        deliver(line);
      }
      line.clear();
    }
    if (writer->failed()) break;
  }
  if (!oversized && line.find_first_not_of(" \t\r") != std::string::npos) deliver(line);

  writer->wait_idle(options.drain_timeout);
  session->close();
  return writer->failed() ? 1 : 0;
}

}  // namespace mcpclass::transport::server
