#include "remote/outgoing_trace.hpp"

namespace mcpclass::remote::detail {

OutgoingTrace::OutgoingTrace(const classify::ClassifyOptions& options) {
  if (options.trace == nullptr) return;
  span_ = options.trace->child();
  if (span_->sampled()) sink_ = options.spans;
}

std::vector<std::pair<std::string, std::string>> OutgoingTrace::headers() const {
  std::vector<std::pair<std::string, std::string>> out;
  if (!span_) return out;
  out.emplace_back(util::kTraceparentHeader, span_->traceparent());
  if (!span_->tracestate.empty()) out.emplace_back(util::kTracestateHeader, span_->tracestate);
  return out;
}

boost::json::object OutgoingTrace::meta() const {
  boost::json::object out;
  for (auto& [key, value] : headers()) out[key] = value;
  return out;
}

void OutgoingTrace::finished(std::string name,
                             std::vector<std::pair<std::string, std::string>> attributes,
                             std::string_view error) const {
  if (sink_ == nullptr) return;
  sink_->record(util::SpanRecord::ending_now(*span_, std::move(name),
                                             util::SpanRecord::Kind::client, start_,
                                             std::move(attributes), error));
}

}  // namespace mcpclass::remote::detail
