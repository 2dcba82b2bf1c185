// One finished span (a request, a classification, an upstream call), where finished spans go
// (`SpanSink`: the OTLP exporter, mcpclass/net/otlp_exporter.hpp), and their encoding as an OTLP
// ExportTraceServiceRequest in protobuf (opentelemetry/proto/collector/trace/v1/
// trace_service.proto), written by hand for the few message types it needs.
// Thread-safety: SpanRecord is plain data; encode_trace_export is reentrant; a SpanSink's
// record() may be called from any thread.
#pragma once

#include "mcpclass/util/trace_context.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mcpclass::util {

struct SpanRecord {
  /// OTLP's SpanKind values.
  enum class Kind : std::uint8_t { internal = 1, server = 2, client = 3 };

  SpanContext context;
  std::string name;
  Kind kind = Kind::internal;
  std::uint64_t start_unix_nano = 0;
  std::uint64_t end_unix_nano = 0;
  std::vector<std::pair<std::string, std::string>> attributes;  ///< string values
  bool error = false;                                           ///< status ERROR (else UNSET)
  std::string error_message;                                    ///< the status message of an error

  /// Nanoseconds since the Unix epoch, now (the system clock, as OTLP wants).
  static std::uint64_t now_unix_nano();
  /// A span from `start_unix_nano` to now; a non-empty `error` gives it status ERROR with that
  /// message.
  static SpanRecord ending_now(SpanContext context, std::string name, Kind kind,
                               std::uint64_t start_unix_nano,
                               std::vector<std::pair<std::string, std::string>> attributes = {},
                               std::string_view error = {});
};

/// Where finished spans go.
class SpanSink {
 public:
  virtual ~SpanSink() = default;
  /// Takes `span` without waiting on I/O (a sink that cannot keep it drops it and counts it).
  virtual void record(SpanRecord span) = 0;
};

/// The spans as one ExportTraceServiceRequest: one ResourceSpans whose resource carries
/// `service.name` = `service_name`, one ScopeSpans of the scope "mcpclass" at `scope_version`.
std::string encode_trace_export(const std::vector<SpanRecord>& spans, std::string_view service_name,
                                std::string_view scope_version);

}  // namespace mcpclass::util
