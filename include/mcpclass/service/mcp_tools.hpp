// The classification protocol as MCP: tools `classify_text` and `list_categories`, each
// category's system prompt as a prompt, and the category list as a resource — generated from any
// Classifier and registered into a server engine in one call.
// Thread-safety: registration is a one-off; the registered handlers are safe to run concurrently
// (they only call the classifier's const members).
#pragma once

#include "mcpclass/classify/classifier.hpp"
#include "mcpclass/classify/provenance.hpp"
#include "mcpclass/server/server.hpp"
#include "mcpclass/service/tool_metrics.hpp"
#include "mcpclass/util/admission_gate.hpp"
#include "mcpclass/util/limits.hpp"
#include "mcpclass/util/span_record.hpp"

#include <boost/json.hpp>

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace mcpclass::service {

struct ToolOptions {
  /// Longest accepted text, in Unicode code points.
  std::size_t max_text_length = util::limits::kMaxTextLength;
  /// Called after every successful classify_text, from whichever thread ran the tool (so it must
  /// be thread-safe), e.g. to count classifications by category. Empty: no call.
  std::function<void(const classify::Classification&)> on_classified;
  /// Each tool call's latency is recorded here when set.
  std::shared_ptr<ToolMetrics> metrics;
  /// Admission control of classify_text (`server.admission`, tool_admission.hpp); null: none.
  std::shared_ptr<util::AdmissionGate> admission;
  /// What classify_text puts in each result's `_meta` under classify::kMetaProvenance (with the
  /// result's cached/fallback flags). Absent: provenance_of(classifier, 0).
  std::optional<classify::Provenance> provenance;
  /// Where classify_text records its spans (the tools/call request's, SERVER, under the caller's
  /// `_meta.traceparent`, and its `classify` span; docs/tracing.md). Null: none.
  std::shared_ptr<util::SpanSink> spans;
};

/// URI of the category-list resource.
inline constexpr std::string_view kCategoriesUri = "mcpclass://categories";

/// Registers the tools (in the reference order: classify_text, list_categories), one prompt per
/// category and the categories resource. The server keeps the classifier alive.
void register_classification(server::Server& server,
                             std::shared_ptr<const classify::Classifier> classifier,
                             ToolOptions options = {});

/// Registers tool classify_<task>, classify_text's input and output over the classifier of one
/// of Classifier::tasks() (its labels in class order are its categories). The server keeps the
/// classifier alive.
void register_task_classification(server::Server& server, const std::string& task,
                                  std::shared_ptr<const classify::Classifier> classifier,
                                  ToolOptions options = {});

/// The `list_categories` object: `{categories, category_system_prompts, category_descriptions}`.
boost::json::object categories_document(const classify::CategorySet& categories);

/// Why `text` cannot be classified (empty, too long, not UTF-8), or nullopt when it can.
std::optional<std::string> text_problem(std::string_view text, std::size_t max_length);

}  // namespace mcpclass::service
