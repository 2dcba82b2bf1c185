#include "mcpclass/net/otlp_exporter.hpp"

#include "mcpclass/version.hpp"
#include "net/http_client.hpp"
#include "util/config_reader.hpp"
#include "util/env_reference.hpp"

#include <fmt/format.h>
#include <boost/json.hpp>

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

namespace mcpclass::net {

namespace strict = util::strict;

OtlpOptions read_telemetry_options(const boost::json::object& telemetry, const std::string& path) {
  strict::ObjectReader t(telemetry, path);
  OtlpOptions o;
  if (const auto* otlp = t.get("otlp")) {
    strict::ObjectReader r(*otlp, t.path_of("otlp"));
    o.endpoint = strict::as_string(r.required("endpoint"), r.path_of("endpoint"));
    try {
      const auto url = parse_http_url(o.endpoint);
      (void)url;
    } catch (const HttpClientError& e) {
      strict::fail(r.path_of("endpoint"), fmt::format("'{}' is not an http:// or https:// URL ({})",
                                                      o.endpoint, e.what()));
    }
    if (const auto* headers = r.get("headers")) {
      const auto header_path = r.path_of("headers");
      for (const auto& [name, value] : strict::as_object(*headers, header_path)) {
        const auto key = strict::member_path(header_path, name);
        if (name.empty()) strict::fail(key, "a header needs a name");
        // Kept as written: `${NAME}` is resolved when the exporter starts.
        o.headers.emplace_back(std::string(name), strict::as_string(value, key));
      }
    }
    if (auto v = r.count("batch", 1, 100'000)) o.batch = *v;
    if (auto v = r.count("max_spans", 1, 10'000'000)) o.max_spans = *v;
    if (auto v = r.seconds("interval", false)) o.interval = *v;
    if (auto v = r.seconds("timeout", false)) o.timeout = *v;
    if (auto v = r.string("service_name")) o.service_name = *v;
    if (o.service_name.empty()) strict::fail(r.path_of("service_name"), "must not be empty");
    if (o.batch > o.max_spans)
      strict::fail(r.path_of("batch"),
                   fmt::format("must not exceed max_spans ({}): {}", o.max_spans, o.batch));
    r.finish();
  }
  t.finish();
  return o;
}

struct OtlpExporter::Impl {
  explicit Impl(OtlpOptions o)
      : options(std::move(o)), engine(options.timeout, std::string(), 1024 * 1024, 1) {
    try {
      url = parse_http_url(options.endpoint);
    } catch (const HttpClientError& e) {
      throw util::ConfigError("telemetry.otlp.endpoint", e.what());
    }
    for (auto& [name, value] : options.headers)
      value = util::resolve_env_reference(value, "telemetry.otlp.headers." + name);
  }

  OtlpOptions options;
  HttpUrl url;
  HttpEngine engine;
  mutable std::mutex mutex;
  std::condition_variable wake;
  std::deque<util::SpanRecord> queue;
  bool stopping = false;
  Counts counts;
  std::thread thread;
  std::size_t failures = 0;  // exports failed in a row

  // After n failed exports in a row, none for interval × 2^(n−1), at most 32 × interval: a dead
  // collector then costs one encoding and one connection attempt per wait, not one per batch
  // (bench/route_proxy.py --tracing, 3 minutes against a refusing port: 1,006,236 spans encoded
  // and sent before, 6,144 after; spans arriving meanwhile wait or, once max_spans wait, are
  // dropped and counted).
  std::chrono::milliseconds backoff() const {
    constexpr std::size_t kMaxDoublings = 5;
    return options.interval * (1 << std::min(failures - 1, kMaxDoublings));
  }

  // The sending thread: a batch when `batch` spans wait, or `interval` after the last send,
  // or at stop (one last batch); after a failure, nothing before the backoff has passed.
  void run() {
    std::unique_lock lock(mutex);
    while (true) {
      if (failures > 0)
        wake.wait_for(lock, backoff(), [&] { return stopping; });
      else
        wake.wait_for(lock, options.interval,
                      [&] { return stopping || queue.size() >= options.batch; });
      if (queue.empty()) {
        if (stopping) return;
        continue;
      }
      const std::size_t n = std::min(queue.size(), options.batch);
      std::vector<util::SpanRecord> batch(std::make_move_iterator(queue.begin()),
                                          std::make_move_iterator(queue.begin() + n));
      queue.erase(queue.begin(), queue.begin() + n);
      const bool last = stopping;
      lock.unlock();
      const bool ok = send(batch);
      lock.lock();
      (ok ? counts.exported : counts.failed) += batch.size();
      failures = ok ? 0 : failures + 1;
      if (last) {
        counts.dropped += queue.size();  // recorded after the last batch left
        queue.clear();
        return;
      }
    }
  }

  bool send(const std::vector<util::SpanRecord>& batch) {
    HttpRequest request;
    request.method = "POST";
    request.target = url.target;
    request.headers = options.headers;
    request.headers.emplace_back("Content-Type", "application/x-protobuf");
    request.body = util::encode_trace_export(batch, options.service_name, kVersion);
    request.timeout = options.timeout;
    try {
      const auto result = engine.perform(url, std::move(request));
      return !result.error && result.head.status >= 200 && result.head.status < 300;
    } catch (const std::exception&) {  // the engine is stopping
      return false;
    }
  }
};

OtlpExporter::OtlpExporter(OtlpOptions options)
    : impl_(std::make_unique<Impl>(std::move(options))) {
  impl_->thread = std::thread([impl = impl_.get()] { impl->run(); });
}

OtlpExporter::~OtlpExporter() {
  stop();
}

void OtlpExporter::record(util::SpanRecord span) {
  {
    std::lock_guard lock(impl_->mutex);
    if (impl_->stopping || impl_->queue.size() >= impl_->options.max_spans) {
      ++impl_->counts.dropped;
      return;
    }
    impl_->queue.push_back(std::move(span));
    // Once per batch filled: the sending thread re-checks the queue before it waits again.
    if (impl_->queue.size() != impl_->options.batch) return;
  }
  impl_->wake.notify_one();
}

OtlpExporter::Counts OtlpExporter::counts() const {
  std::lock_guard lock(impl_->mutex);
  Counts c = impl_->counts;
  c.queued = impl_->queue.size();
  return c;
}

std::string OtlpExporter::prometheus() const {
  const auto c = counts();
  return fmt::format(
      "# HELP mcpclass_otlp_spans_exported_total Spans the OTLP collector accepted.\n"
      "# TYPE mcpclass_otlp_spans_exported_total counter\n"
      "mcpclass_otlp_spans_exported_total {}\n"
      "# HELP mcpclass_otlp_spans_failed_total Spans of exports that failed (no answer, or not "
      "2xx).\n"
      "# TYPE mcpclass_otlp_spans_failed_total counter\n"
      "mcpclass_otlp_spans_failed_total {}\n"
      "# HELP mcpclass_otlp_spans_dropped_total Spans never sent: the export queue was full.\n"
      "# TYPE mcpclass_otlp_spans_dropped_total counter\n"
      "mcpclass_otlp_spans_dropped_total {}\n"
      "# HELP mcpclass_otlp_queue_spans Spans waiting to be exported.\n"
      "# TYPE mcpclass_otlp_queue_spans gauge\n"
      "mcpclass_otlp_queue_spans {}\n",
      c.exported, c.failed, c.dropped, c.queued);
}

void OtlpExporter::stop() {
  {
    std::lock_guard lock(impl_->mutex);
    if (impl_->stopping) return;
    impl_->stopping = true;
  }
  impl_->wake.notify_one();
  if (impl_->thread.joinable()) impl_->thread.join();
  impl_->engine.stop();
}

}  // namespace mcpclass::net
