#include "service/request_spans.hpp"

namespace mcpclass::service::detail {

RequestSpans::RequestSpans(std::shared_ptr<util::SpanSink> sink,
                           const std::optional<util::TraceParent>& parent, std::string name,
                           Attributes attributes)
    : request(util::start_span(parent)),
      classify(request.child()),
      name(std::move(name)),
      attributes(std::move(attributes)) {
  if (request.sampled()) this->sink = std::move(sink);
}

void RequestSpans::answered(std::uint64_t classify_start, std::string kind,
                            std::string_view error) const {
  if (!sink) return;
  sink->record(util::SpanRecord::ending_now(classify, "classify", util::SpanRecord::Kind::internal,
                                            classify_start,
                                            {{"mcpclass.classifier", std::move(kind)}}, error));
  sink->record(util::SpanRecord::ending_now(request, name, util::SpanRecord::Kind::server, received,
                                            attributes, error));
}

}  // namespace mcpclass::service::detail
