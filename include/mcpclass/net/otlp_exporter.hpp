// The OTLP/HTTP span exporter (docs/tracing.md): spans recorded by any thread wait in a queue
// bounded by count, and a thread of its own sends them in batches as protobuf
// (`application/x-protobuf`, ExportTraceServiceRequest) to the collector's traces URL. A full
// queue drops the span (counted), and a dead or slow collector only fails batches (counted), so
// recording never waits on the network and a request never waits on the collector. After a failed
// export the thread waits interval × 2^(failures − 1), at most 32 × interval, before the next.
// Thread-safety: record(), counts() and prometheus() may be called from any thread; stop() and
// the destructor belong to the owner.
#pragma once

#include "mcpclass/util/span_record.hpp"

#include <boost/json/fwd.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mcpclass::net {

/// `telemetry.otlp` of the configuration document.
struct OtlpOptions {
  /// The collector's traces URL (http:// or https://), e.g. http://127.0.0.1:4318/v1/traces.
  std::string endpoint;
  /// Sent with every export (e.g. an API key).
  std::vector<std::pair<std::string, std::string>> headers;
  /// Spans sent in one request at most.
  std::size_t batch = 512;
  /// Spans waiting at most; beyond, new spans are dropped.
  std::size_t max_spans = 4096;
  /// A batch goes out at least this often while spans wait.
  std::chrono::milliseconds interval{1000};
  /// Connecting and the whole exchange of one export.
  std::chrono::milliseconds timeout{2000};
  /// The resource's service.name.
  std::string service_name = "mcpclass";
};

/// Reads the `telemetry` section (`{otlp: {endpoint, headers, batch, max_spans, interval,
/// timeout, service_name}}`); throws util::ConfigError naming the key. No `otlp`: nullopt-like
/// options with an empty endpoint (no exporter).
OtlpOptions read_telemetry_options(const boost::json::object& telemetry, const std::string& path);

class OtlpExporter final : public util::SpanSink {
 public:
  /// Starts the sending thread. Throws util::ConfigError for an endpoint that is no http(s) URL.
  explicit OtlpExporter(OtlpOptions options);
  /// Calls stop().
  ~OtlpExporter() override;
  OtlpExporter(const OtlpExporter&) = delete;
  OtlpExporter& operator=(const OtlpExporter&) = delete;

  /// Queues `span`, or drops it (counted) when max_spans wait already or after stop().
  void record(util::SpanRecord span) override;

  struct Counts {
    std::uint64_t exported = 0;  ///< spans the collector accepted (a 2xx)
    std::uint64_t failed = 0;    ///< spans of batches that failed (no answer, or not 2xx)
    std::uint64_t dropped = 0;   ///< spans never sent: the queue was full, or stopped
    std::size_t queued = 0;      ///< spans waiting now
  };
  Counts counts() const;
  /// `mcpclass_otlp_spans_{exported,failed,dropped}_total` and `mcpclass_otlp_queue_spans`.
  std::string prometheus() const;

  /// Sends what waits (one last batch at most, bounded by `timeout`), then joins the thread.
  /// Idempotent.
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace mcpclass::net
