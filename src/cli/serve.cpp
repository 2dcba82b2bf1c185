// serve: the classifier as an MCP server on the chosen transports, until input ends (stdio only)
// or SIGINT/SIGTERM, then drain and exit. SIGHUP, or a change to the configuration file or a model
// file it names, reloads the classifier without a restart.
#include "cli/app.hpp"
#include "cli/config_watcher.hpp"
#include "cli/progress_bar.hpp"
#include "cli/serve_signals.hpp"
#include "mcpclass/learned/learned_settings.hpp"
#include "mcpclass/net/otlp_exporter.hpp"
#include "mcpclass/route/route_proxy.hpp"
#include "mcpclass/service/classification_service.hpp"
#include "mcpclass/service/http_front.hpp"
#include "mcpclass/transport/server/stdio.hpp"

#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
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
                                                      const std::string& default_host) {
  std::string host = default_host;
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

// The command line's additions to `server.http.auth`, made to the document so that the transport
// reads and checks them like the file's own.
void add_auth_options(boost::json::object& http, const ServeOptions& options) {
  boost::json::value& section = http["auth"];
  if (!section.is_object()) section = boost::json::object{};
  auto& auth = section.get_object();
  auto append = [&auth](std::string_view key, const std::vector<std::string>& items) {
    if (items.empty()) return;
    boost::json::value& list = auth[key];
    if (!list.is_array()) list = boost::json::array{};
    for (const auto& item : items) list.get_array().emplace_back(item);
  };
  append("allowed_hosts", options.allow_hosts);
  append("allowed_origins", options.allow_origins);
  if (!options.token_file.empty()) auth["bearer_tokens_file"] = options.token_file;
  if (options.allow_unauthenticated) auth["allow_unauthenticated"] = true;
}

// The files whose change means "reload": the document, the model files its classifier reads
// (not the kNN index, which the classifier itself may write) and the token classifier's model.
std::vector<std::string> watched_files(const std::string& config_path,
                                       const config::Config& config) {
  std::vector<std::string> files{config_path};
  if (learned::is_learned_kind(config.classifier.kind)) {
    const auto& l = config.classifier.learned;
    for (const auto* path :
         {&l.encoder, &l.tokenizer, &l.examples, &l.head, &l.model, &l.adapter, &l.labels})
      if (!path->empty()) files.push_back(learned::resolve_model_path(*path));
  }
  if (config.token_classifier && config.token_classifier_remote.empty())
    files.push_back(learned::resolve_model_path(config.token_classifier->model));
  return files;
}

// What starts reloads: SIGHUP and the file watcher. stop() (also the destructor) returns once
// neither can call back any more.
class ReloadTriggers {
 public:
  explicit ReloadTriggers(ServeSignals& signals) : signals_(signals) {}
  ~ReloadTriggers() { stop(); }
  ReloadTriggers(const ReloadTriggers&) = delete;
  ReloadTriggers& operator=(const ReloadTriggers&) = delete;

  void start_watching(std::chrono::milliseconds debounce, std::function<void()> changed,
                      const std::vector<std::string>& files) {
    std::lock_guard lock(mutex_);
    watcher_ = std::make_unique<ConfigWatcher>(debounce, std::move(changed));
    watcher_->watch(files);
  }
  /// Follows the files of a newly loaded configuration.
  void watch(const std::vector<std::string>& files) {
    std::lock_guard lock(mutex_);
    if (watcher_) watcher_->watch(files);
  }
  void stop() {
    signals_.on_hangup({});
    std::unique_ptr<ConfigWatcher> stopping;  // joined outside the lock its callback may take
    std::lock_guard lock(mutex_);
    stopping = std::move(watcher_);
  }

 private:
  ServeSignals& signals_;
  std::mutex mutex_;
  std::unique_ptr<ConfigWatcher> watcher_;
};

}  // namespace

int run_serve(const config::Config& document, const ServeOptions& options) {
  // First, so a signal while the classifier loads already means "drain and stop", not death.
  ServeSignals shutdown;
  bound_heap_retention();
  config::Config config = document;
  add_auth_options(config.server.http, options);
  std::shared_ptr<const classify::Classifier> classifier =
      config::make_classifier(config, progress_bar("loading", ProgressBar::Units::bytes));
  if (options.route && !config.route)
    throw config::ConfigError("route",
                              "mcpclass route needs a `route` section with the upstream models "
                              "(docs/route.md)");
  const bool want_stdio = options.stdio && !options.route;
  const bool want_http = !options.http.empty() || !options.stdio;

  // Outlives the service, the proxy and the server that record spans into it (declared before
  // them).
  std::shared_ptr<net::OtlpExporter> exporter;
  if (auto otlp = net::read_telemetry_options(config.telemetry, "telemetry");
      !otlp.endpoint.empty())
    exporter = std::make_shared<net::OtlpExporter>(std::move(otlp));
  service::ServiceOptions service_options;
  service_options.spans = exporter;
  service::ClassificationService service(config, classifier, std::move(service_options));
  const auto& server = service.server();

  // Before the reload triggers, which apply a new `route` section to it. Its upstream sockets and
  // the server's connections share the process's descriptors.
  std::shared_ptr<route::RouteProxy> route_proxy;  // stopped after `http`
  std::shared_ptr<util::DescriptorBudget> descriptors;
  if (options.route && want_http) {
    descriptors = std::make_shared<util::DescriptorBudget>();
    const auto served = service.served();
    auto models = route::make_signal_models(config, served->classifier, served->provenance);
    route_proxy = std::make_shared<route::RouteProxy>(
        std::make_shared<const route::Router>(*config.route, config.router, std::move(models)),
        route::RouteProxyOptions{
            .max_text_length = config.server.max_text_length,
            // As many decisions at once as the classifier's batches take.
            .worker_threads = std::max<std::size_t>(2, service.workers()),
            .descriptors = descriptors,
            .spans = exporter,
            .log = [](std::string_view line) { fmt::print(stderr, "{}\n", line); }});
  }
  service::ReloadStage route_stage;
  if (route_proxy) {
    route_stage = [&route_proxy](const config::Config& next,
                                 const service::ServedClassifier& served) {
      if (!next.route)
        throw config::ConfigError("route", "mcpclass route needs its `route` section");
      auto models = route::make_signal_models(next, served.classifier, served.provenance);
      return route_proxy->prepare(
          std::make_shared<const route::Router>(*next.route, next.router, std::move(models)));
    };
  }

  // Reloads come from SIGHUP (the signal thread) and the watcher (its thread); the service runs
  // one at a time. Both are ready before the transports say "serving", so no change is missed.
  std::function<void(const char*)> reload;
  ReloadTriggers triggers(shutdown);  // stopped before `reload` goes, on every way out
  reload = [&](const char* why) {
    if (options.config_path.empty()) {
      fmt::print(stderr, "mcpclass: {}: nothing to reload (the embedded configuration)\n", why);
      return;
    }
    std::vector<std::string> files;
    const auto result = service.reload(
        [&] {
          config::Config next = load_config(options.config_path);
          files = watched_files(options.config_path, next);
          return next;
        },
        route_stage);
    if (!result.ok) {
      fmt::print(stderr, "mcpclass: {}: reload refused, generation {} keeps serving: {}\n", why,
                 result.generation, result.error);
      return;
    }
    const auto now = service.classifier();
    fmt::print(stderr, "mcpclass: {}: reloaded, generation {}: {} categories ({} classifier)\n",
               why, result.generation, now->categories().size(), now->kind());
    triggers.watch(files);
  };
  shutdown.on_hangup([&] { reload("SIGHUP"); });
  if (!options.config_path.empty() && config.server.reload_watch) {
    try {
      triggers.start_watching(
          config.server.reload_debounce, [&] { reload("configuration changed"); },
          watched_files(options.config_path, config));
    } catch (const std::exception& e) {
      fmt::print(stderr, "mcpclass: not watching the configuration ({}); SIGHUP reloads\n",
                 e.what());
    }
  }

  int running = 0;
  auto stdio_counters = std::make_shared<transport::server::StdioCounters>();
  std::unique_ptr<transport::server::HttpServer> http;
  if (want_http) {
    transport::server::HttpServerOptions http_options = service.http_options();
    if (!options.http.empty())
      std::tie(http_options.host, http_options.port) =
          parse_endpoint(options.http, http_options.host);
    http_options.stateless = options.stateless;
    if (!options.tls_cert.empty()) http_options.tls_cert_file = options.tls_cert;
    if (!options.tls_key.empty()) http_options.tls_key_file = options.tls_key;
    http_options.app = route_proxy;
    http_options.descriptors = descriptors;
    if (route_proxy || exporter)
      http_options.extra_metrics = [proxy = route_proxy.get(), exporter = exporter.get()] {
        return (proxy ? proxy->prometheus() : std::string()) +
               (exporter ? exporter->prometheus() : std::string());
      };
    try {
      http = service::make_http_front(service, {.http = http_options,
                                                .stdio = want_stdio ? stdio_counters : nullptr,
                                                .spans = exporter});
      http->start();
      ++running;
      fmt::print(stderr, "mcpclass: serving {} categories ({} classifier) on {}://{}:{}/mcp{}\n",
                 classifier->categories().size(), classifier->kind(),
                 http_options.tls_cert_file.empty() ? "http" : "https", http_options.host,
                 http->port(), options.stateless ? " (stateless)" : "");
      if (route_proxy)
        fmt::print(stderr, "mcpclass: routing {} models on {}://{}:{}/v1/chat/completions\n",
                   config.route->models.size(),
                   http_options.tls_cert_file.empty() ? "http" : "https", http_options.host,
                   http->port());
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
      transport::server::StdioOptions stdio_options;
      stdio_options.stop_fd = shutdown.read_fd();
      stdio_options.counters = stdio_counters;
      transport::server::serve_stdio(server, 0, 1, stdio_options);
      // Input ended: with no other transport there is nothing left to serve.
      if (!http) shutdown.trigger("end of input");
    });
  }

  if (running == 0) {
    fmt::print(stderr, "mcpclass: no transport could start\n");
    return kRuntimeError;
  }

  shutdown.wait();
  triggers.stop();
  if (http) http->stop();
  if (route_proxy) route_proxy->stop();
  if (stdio_thread.joinable()) stdio_thread.join();
  service.stop();
  if (exporter) exporter->stop();  // the spans of the last requests go out
  return kOk;
}

}  // namespace mcpclass::cli
