// serve: the classifier as an MCP server on the chosen transports, until input ends (stdio only)
// or SIGINT/SIGTERM, then drain and exit.
#include "cli/app.hpp"
#include "mcpclass/service/classification_service.hpp"
#include "mcpclass/transport/server/http_server.hpp"
#include "mcpclass/transport/server/stdio.hpp"

#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>
#include <vector>

namespace mcpclass::cli {

namespace {

// HOST:PORT, [v6]:PORT or PORT.
std::pair<std::string, unsigned short> parse_endpoint(const std::string& spec,
                                                      const config::HttpSettings& defaults) {
  std::string host = defaults.host;
  std::string port = spec;
  if (const auto colon = spec.rfind(':'); colon != std::string::npos) {
    host = spec.substr(0, colon);
    port = spec.substr(colon + 1);
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
      host = host.substr(1, host.size() - 2);
    }
  }
  try {
    std::size_t used = 0;
    const unsigned long value = std::stoul(port, &used);
    if (used != port.size() || value > 65535) throw std::out_of_range(port);
    return {host, static_cast<unsigned short>(value)};
  } catch (const std::exception&) {
    throw config::ConfigError(fmt::format("--http: '{}' is not HOST:PORT", spec));
  }
}

// SIGINT/SIGTERM handlers only write the signal number to a self-pipe (async-signal-safe, and
// correct whichever thread the kernel picks, including threads libraries started before main);
// a dedicated thread reads it and wakes the main thread and the stdio loop.
int g_signal_pipe[2] = {-1, -1};

extern "C" void on_shutdown_signal(int signal) {
  const int saved = errno;
  const char byte = static_cast<char>(signal);
  [[maybe_unused]] auto n = ::write(g_signal_pipe[1], &byte, 1);
  errno = saved;
}

class ShutdownSignal {
 public:
  ShutdownSignal() {
    if (::pipe(g_signal_pipe) != 0 || ::pipe(pipe_) != 0) throw std::runtime_error("pipe() failed");
    struct sigaction action {};
    action.sa_handler = on_shutdown_signal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    ::sigaction(SIGINT, &action, &old_int_);
    ::sigaction(SIGTERM, &action, &old_term_);
    waiter_ = std::thread([this] {
      char byte = 0;
      ssize_t n;
      do {
        n = ::read(g_signal_pipe[0], &byte, 1);
      } while (n < 0 && errno == EINTR);
      if (n == 1 && byte != 0) trigger(fmt::format("signal {}", static_cast<int>(byte)));
    });
  }
  ~ShutdownSignal() {
    // Wake the waiter if no signal came (a 0 byte), so it can be joined.
    const char byte = 0;
    [[maybe_unused]] auto n = ::write(g_signal_pipe[1], &byte, 1);
    waiter_.join();
    ::sigaction(SIGINT, &old_int_, nullptr);
    ::sigaction(SIGTERM, &old_term_, nullptr);
    for (int fd : {g_signal_pipe[0], g_signal_pipe[1], pipe_[0], pipe_[1]}) ::close(fd);
    g_signal_pipe[0] = g_signal_pipe[1] = -1;
  }
  void trigger(const std::string& why) {
    std::lock_guard lock(mutex_);
    if (fired_) return;
    fired_ = true;
    fmt::print(stderr, "mcpclass: {}: draining and stopping\n", why);
    const char byte = 1;
    [[maybe_unused]] auto n = ::write(pipe_[1], &byte, 1);
    cv_.notify_all();
  }
  void wait() {
    std::unique_lock lock(mutex_);
    cv_.wait(lock, [&] { return fired_; });
  }
  int read_fd() const { return pipe_[0]; }

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
  int pipe_[2] = {-1, -1};
  std::thread waiter_;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool fired_ = false;
};

// Classifications by category, for GET /metrics. Counted from any tool thread.
class ClassificationCounters {
 public:
  explicit ClassificationCounters(const classify::CategorySet& categories)
      : counts_(categories.size()) {
    for (const auto& c : categories) names_.push_back(c.name);
  }
  void count(const classify::Classification& c) {
    if (c.class_index < counts_.size())
      counts_[c.class_index].fetch_add(1, std::memory_order_relaxed);
  }
  std::string prometheus() const {
    std::string text =
        "# HELP mcpclass_classifications_total Successful classify_text calls by category.\n"
        "# TYPE mcpclass_classifications_total counter\n";
    for (std::size_t i = 0; i < counts_.size(); ++i) {
      text += fmt::format("mcpclass_classifications_total{{category=\"{}\"}} {}\n",
                          escape_label(names_[i]), counts_[i].load(std::memory_order_relaxed));
    }
    return text;
  }

 private:
  static std::string escape_label(const std::string& value) {
    std::string out;
    for (const char ch : value) {
      if (ch == '\\' || ch == '"') out += '\\';
      if (ch == '\n') {
        out += "\\n";
        continue;
      }
      out += ch;
    }
    return out;
  }
  std::vector<std::string> names_;
  std::vector<std::atomic<std::uint64_t>> counts_;
};

}  // namespace

int run_serve(const config::Config& document, const ServeOptions& options) {
  // First, so a signal while the classifier loads already means "drain and stop", not death.
  ShutdownSignal shutdown;
  bound_heap_retention();
  config::Config config = document;
  auto& auth = config.server.http.auth;
  auth.allowed_hosts.insert(auth.allowed_hosts.end(), options.allow_hosts.begin(),
                            options.allow_hosts.end());
  auth.allowed_origins.insert(auth.allowed_origins.end(), options.allow_origins.begin(),
                              options.allow_origins.end());
  if (!options.token_file.empty()) auth.bearer_tokens_file = options.token_file;
  if (options.allow_unauthenticated) auth.allow_unauthenticated = true;
  std::shared_ptr<const classify::Classifier> classifier = config::make_classifier(config);
  const bool want_stdio = options.stdio;
  const bool want_http = !options.http.empty() || !options.stdio;

  auto counters = std::make_shared<ClassificationCounters>(classifier->categories());
  service::ClassificationService service(
      config, classifier,
      {.on_classified = [counters](const classify::Classification& c) { counters->count(c); }});
  const auto& server = service.server();

  int running = 0;
  std::unique_ptr<transport::HttpServer> http;
  if (want_http) {
    transport::HttpServerOptions http_options = service.http_options();
    if (!options.http.empty())
      std::tie(http_options.host, http_options.port) =
          parse_endpoint(options.http, config.server.http);
    http_options.stateless = options.stateless;
    if (!options.tls_cert.empty()) http_options.tls_cert_file = options.tls_cert;
    if (!options.tls_key.empty()) http_options.tls_key_file = options.tls_key;
    http_options.extra_metrics = [counters, &service] {
      return counters->prometheus() + service.prometheus() + heap_metrics();
    };
    const auto started = std::chrono::steady_clock::now();
    auto health = [&service, classifier, started, want_stdio] {
      boost::json::object h = service.health();
      boost::json::array names;
      for (const auto& c : classifier->categories()) names.emplace_back(c.name);
      h["categories"] = std::move(names);
      h["transports"] = want_stdio ? boost::json::array{"streamable-http", "sse", "stdio"}
                                   : boost::json::array{"streamable-http", "sse"};
      h["uptime_seconds"] =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      return h;
    };
    try {
      http = std::make_unique<transport::HttpServer>(server, http_options, health);
      http->start();
      ++running;
      fmt::print(stderr, "mcpclass: serving {} categories ({} classifier) on {}://{}:{}/mcp{}\n",
                 classifier->categories().size(), classifier->kind(),
                 http_options.tls_cert_file.empty() ? "http" : "https", http_options.host,
                 http->port(), options.stateless ? " (stateless)" : "");
    } catch (const std::exception& e) {
      fmt::print(stderr, "mcpclass: HTTP transport failed to start: {}\n", e.what());
      http.reset();
    }
  }

  std::thread stdio_thread;
  if (want_stdio) {
    ++running;
    fmt::print(stderr, "mcpclass: serving {} categories ({} classifier) on stdio\n",
               classifier->categories().size(), classifier->kind());
    stdio_thread = std::thread([&] {
      transport::StdioOptions stdio_options;
      stdio_options.stop_fd = shutdown.read_fd();
      transport::serve_stdio(server, 0, 1, stdio_options);
      // Input ended: with no other transport there is nothing left to serve.
      if (!http) shutdown.trigger("end of input");
    });
  }

  if (running == 0) {
    fmt::print(stderr, "mcpclass: no transport could start\n");
    return kRuntimeError;
  }
  shutdown.wait();
  if (http) http->stop();
  if (stdio_thread.joinable()) stdio_thread.join();
  service.stop();
  return kOk;
}

}  // namespace mcpclass::cli
