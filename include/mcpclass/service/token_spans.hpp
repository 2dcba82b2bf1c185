// Labelled spans of a text from a token classifier (PII detection): the one function every entry
// point answers with — the MCP tool (register_token_classification), `mcpclass detect`, the C
// ABI's mcpc_detect_spans_json and so the Go and Python bindings — and the tool that serves it.
// Thread-safety: detect_spans() may be called concurrently; registration is a one-off.
#pragma once

#include "mcpclass/learned/token_classifier.hpp"
#include "mcpclass/server/server.hpp"
#include "mcpclass/service/tool_metrics.hpp"
#include "mcpclass/util/admission_gate.hpp"
#include "mcpclass/util/limits.hpp"

#include <boost/json.hpp>

#include <cstddef>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace mcpclass::service {

/// A request detect_spans() refuses: the text (empty, too long, not UTF-8) or the aggregation
/// strategy named. The message says which.
class SpanRequestError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// `{"spans": [...], "aggregation": name}`, each span as TokenSpan::to_json writes it (code-point
/// `start`/`end` as the transformers pipeline, and `byte_start`/`byte_end`). `aggregation`
/// overrides the configured strategy ("none", "simple", "first", "average", "max"). Throws
/// SpanRequestError for a bad text or strategy, ClassifyError when the model fails.
boost::json::object detect_spans(const learned::TokenClassifier& classifier, std::string_view text,
                                 std::optional<std::string_view> aggregation = {},
                                 std::size_t max_text_length = util::limits::kMaxTextLength);

/// Registers tool `name` (inputSchema {text, aggregation?}, outputSchema {spans, aggregation})
/// answering with detect_spans() as structuredContent. The server keeps the classifier alive.
/// With `admission` (`server.admission`), each call takes a place in that gate as classify_text's
/// do (tool_admission.hpp), or is refused with -32010.
void register_token_classification(server::Server& server,
                                   std::shared_ptr<const learned::TokenClassifier> classifier,
                                   const std::string& name, std::size_t max_text_length,
                                   std::shared_ptr<ToolMetrics> metrics = nullptr,
                                   std::shared_ptr<util::AdmissionGate> admission = nullptr);

}  // namespace mcpclass::service
