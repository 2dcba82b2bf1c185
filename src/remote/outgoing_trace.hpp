// Internal: the trace context a remote classifier's call sends on (docs/tracing.md, "Trace
// context out"): a span of its own under the caller's (ClassifyOptions::trace), whose id is the
// parent the remote server receives, recorded as a CLIENT span when the caller gave a sink.
// Thread-safety: one value per call.
#pragma once

#include "mcpclass/classify/classifier.hpp"
#include "mcpclass/util/span_record.hpp"
#include "mcpclass/util/trace_context.hpp"

#include <boost/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mcpclass::remote::detail {

class OutgoingTrace {
 public:
  /// A child of `options.trace`, or nothing to send when the caller has no trace.
  explicit OutgoingTrace(const classify::ClassifyOptions& options);

  /// `traceparent` (and `tracestate`) as HTTP headers; empty without a trace.
  std::vector<std::pair<std::string, std::string>> headers() const;
  /// The same two as `_meta` keys (MCP 2026-07-28, SEP-414); empty without a trace.
  boost::json::object meta() const;
  /// Records the call's CLIENT span named `name`, from construction to now, when the caller gave
  /// a sink and the trace is sampled; a non-empty `error` makes it an ERROR span.
  void finished(std::string name, std::vector<std::pair<std::string, std::string>> attributes,
                std::string_view error = {}) const;

 private:
  std::optional<util::SpanContext> span_;
  util::SpanSink* sink_ = nullptr;
  std::uint64_t start_ = util::SpanRecord::now_unix_nano();
};

/// Runs `call` and records `trace`'s span around it (an ERROR span, and rethrown, when it throws).
template <typename F>
auto traced_call(const OutgoingTrace& trace, std::string name,
                 std::vector<std::pair<std::string, std::string>> attributes, F&& call) {
  try {
    auto out = call();
    trace.finished(std::move(name), std::move(attributes));
    return out;
  } catch (const std::exception& e) {
    trace.finished(std::move(name), std::move(attributes), e.what());
    throw;
  }
}

}  // namespace mcpclass::remote::detail
