#include "mcpclass/util/span_record.hpp"

#include "util/protobuf_writer.hpp"

#include <chrono>

namespace mcpclass::util {

namespace {

using protobuf::bytes_field;
using protobuf::int_field;

std::string_view bytes_of(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// common.proto: KeyValue { string key = 1; AnyValue value = 2; },
// AnyValue { string string_value = 1; ... }.
std::string key_value(std::string_view key, std::string_view value) {
  std::string any;
  bytes_field(any, 1, value);
  std::string kv;
  bytes_field(kv, 1, key);
  bytes_field(kv, 2, any);
  return kv;
}

// trace.proto: Span.
std::string span_message(const SpanRecord& s) {
  std::string span;
  bytes_field(span, 1, bytes_of(s.context.trace_id.data(), s.context.trace_id.size()));
  bytes_field(span, 2, bytes_of(s.context.span_id.data(), s.context.span_id.size()));
  if (!s.context.tracestate.empty()) bytes_field(span, 3, s.context.tracestate);
  if (s.context.has_parent())
    bytes_field(span, 4, bytes_of(s.context.parent_id.data(), s.context.parent_id.size()));
  bytes_field(span, 5, s.name);
  int_field(span, 6, static_cast<std::int64_t>(s.kind));
  protobuf::fixed64_field(span, 7, s.start_unix_nano);
  protobuf::fixed64_field(span, 8, s.end_unix_nano);
  for (const auto& [key, value] : s.attributes) bytes_field(span, 9, key_value(key, value));
  if (s.error) {  // Status { string message = 2; StatusCode code = 3; }, STATUS_CODE_ERROR = 2
    std::string status;
    if (!s.error_message.empty()) bytes_field(status, 2, s.error_message);
    int_field(status, 3, 2);
    bytes_field(span, 15, status);
  }
  // SpanFlags: the W3C trace flags in the low byte.
  protobuf::fixed32_field(span, 16, s.context.flags);
  return span;
}

}  // namespace

std::uint64_t SpanRecord::now_unix_nano() {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::system_clock::now().time_since_epoch())
                                        .count());
}

SpanRecord SpanRecord::ending_now(SpanContext context, std::string name, Kind kind,
                                  std::uint64_t start_unix_nano,
                                  std::vector<std::pair<std::string, std::string>> attributes,
                                  std::string_view error) {
  return {std::move(context), std::move(name),       kind,           start_unix_nano,
          now_unix_nano(),    std::move(attributes), !error.empty(), std::string(error)};
}

std::string encode_trace_export(const std::vector<SpanRecord>& spans, std::string_view service_name,
                                std::string_view scope_version) {
  std::string resource;  // Resource { repeated KeyValue attributes = 1; }
  bytes_field(resource, 1, key_value("service.name", service_name));
  std::string scope;  // InstrumentationScope { string name = 1; string version = 2; }
  bytes_field(scope, 1, "mcpclass");
  bytes_field(scope, 2, scope_version);
  std::string scope_spans;  // ScopeSpans { scope = 1; repeated Span spans = 2; }
  bytes_field(scope_spans, 1, scope);
  for (const auto& s : spans) bytes_field(scope_spans, 2, span_message(s));
  std::string resource_spans;  // ResourceSpans { resource = 1; repeated ScopeSpans = 2; }
  bytes_field(resource_spans, 1, resource);
  bytes_field(resource_spans, 2, scope_spans);
  std::string request;  // ExportTraceServiceRequest { repeated ResourceSpans = 1; }
  bytes_field(request, 1, resource_spans);
  return request;
}

}  // namespace mcpclass::util
