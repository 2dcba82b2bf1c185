// Internal: the spans of one classification request, shared by every answer path of the
// service (POST /classify and /classify/spans, classify_text): the request's own (SERVER, under
// the caller's traceparent) and its classification's (INTERNAL, its child), recorded when it was
// answered. docs/tracing.md lists their names and attributes.
// Thread-safety: one value per request; answered() may run on any thread, once.
#pragma once

#include "mcpclass/util/span_record.hpp"
#include "mcpclass/util/trace_context.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mcpclass::service::detail {

struct RequestSpans {
  using Attributes = std::vector<std::pair<std::string, std::string>>;

  /// The request's span under `parent` (a new trace without one) and its classification's;
  /// recorded into `sink` only when there is one and the trace is sampled.
  RequestSpans(std::shared_ptr<util::SpanSink> sink, const std::optional<util::TraceParent>& parent,
               std::string name, Attributes attributes);

  /// Records both spans, the classification's from `classify_start` (SpanRecord::now_unix_nano)
  /// with `mcpclass.classifier` = `kind`; a non-empty `error` makes it an ERROR span.
  void answered(std::uint64_t classify_start, std::string kind, std::string_view error = {}) const;

  std::shared_ptr<util::SpanSink> sink;  ///< null: not recorded
  util::SpanContext request;
  util::SpanContext classify;  ///< the request's child: the parent of a remote classifier's call
  std::string name;
  Attributes attributes;
  std::uint64_t received = util::SpanRecord::now_unix_nano();
};

}  // namespace mcpclass::service::detail
