#include "mcpclass/service/token_spans.hpp"

#include "mcpclass/service/mcp_tools.hpp"
#include "mcpclass/service/tool_admission.hpp"
#include "service/tool_results.hpp"

#include <fmt/format.h>

namespace mcpclass::service {

namespace json = boost::json;

namespace {

json::object input_schema() {
  return json::parse(R"j({"type":"object",
    "properties":{"text":{"type":"string","description":"The text to search for labelled spans"},
                  "aggregation":{"type":"string","enum":["none","simple","first","average","max"],
                    "description":"How tokens merge into spans, as the transformers token-classification pipeline's aggregation_strategy (default: the configured one)"}},
    "required":["text"]})j")
      .as_object();
}

json::object output_schema() {
  return json::parse(R"j({"type":"object",
    "properties":{"aggregation":{"type":"string"},
                  "spans":{"type":"array","items":{"type":"object",
                    "properties":{"entity_group":{"type":"string","description":"The label without its B-/I- prefix"},
                                  "entity":{"type":"string","description":"The token's label (aggregation none)"},
                                  "score":{"type":"number","minimum":0,"maximum":1},
                                  "word":{"type":"string"},
                                  "start":{"type":"integer","minimum":0,"description":"First Unicode code point of the span"},
                                  "end":{"type":"integer","minimum":0,"description":"Code point after the span"},
                                  "byte_start":{"type":"integer","minimum":0,"description":"First UTF-8 byte"},
                                  "byte_end":{"type":"integer","minimum":0,"description":"UTF-8 byte after the span"},
                                  "index":{"type":"integer","minimum":0}},
                    "required":["score","word","start","end","byte_start","byte_end"]}}},
    "required":["spans","aggregation"]})j")
      .as_object();
}

}  // namespace

json::object detect_spans(const learned::TokenClassifier& classifier, std::string_view text,
                          std::optional<std::string_view> aggregation,
                          std::size_t max_text_length) {
  if (auto problem = text_problem(text, max_text_length)) throw SpanRequestError(*problem);
  std::optional<learned::TokenAggregation> strategy;
  if (aggregation) {
    strategy = learned::parse_token_aggregation(*aggregation);
    if (!strategy)
      throw SpanRequestError("aggregation must be none, simple, first, average or max (got '" +
                             std::string(*aggregation) + "')");
  }
  const auto used = strategy.value_or(classifier.aggregation());
  json::array spans;
  for (const auto& span : classifier.detect(text, used)) spans.emplace_back(span.to_json(used));
  return {{"spans", std::move(spans)}, {"aggregation", learned::to_string(used)}};
}

void register_token_classification(server::Server& server,
                                   std::shared_ptr<const learned::TokenClassifier> classifier,
                                   const std::string& name, std::size_t max_text_length,
                                   std::shared_ptr<ToolMetrics> metrics,
                                   std::shared_ptr<util::AdmissionGate> admission) {
  std::string labels;
  for (const auto& l : classifier->labels()) labels += (labels.empty() ? "" : ", ") + l;
  if (labels.empty()) labels = "those of the server it calls";  // a remote model
  server::Tool tool;
  tool.name = name;
  tool.title = "Detect labelled spans (PII)";
  tool.description = fmt::format(
      "Find labelled spans in a text (personal data such as names, e-mail addresses and phone "
      "numbers, or whatever the model tags) with a token-classification model whose labels are "
      "{}. Returns {{spans: [{{entity_group, score, word, start, end, byte_start, byte_end}}], "
      "aggregation}}; start/end count Unicode code points, byte_start/byte_end UTF-8 bytes.",
      labels);
  tool.input_schema = input_schema();
  tool.output_schema = output_schema();
  tool.annotations = json::object{{"readOnlyHint", true}, {"idempotentHint", true}};
  tool.handler = [classifier, max_text_length](const json::object& args, server::RequestContext&) {
    std::optional<std::string_view> aggregation;
    if (const auto* a = args.if_contains("aggregation"); a != nullptr && a->is_string())
      aggregation = a->get_string();
    try {
      return detail::structured(
          detect_spans(*classifier, args.at("text").get_string(), aggregation, max_text_length));
    } catch (const SpanRequestError& e) {
      return server::ToolResult::error(e.what());
    }
  };
  tool.handler =
      detail::timed(std::move(tool.handler), std::move(metrics), tool.name, "token_classifier");
  // A span call runs a model over the whole text, as classify_text does: it waits in the same
  // gate, or one client's span calls could take every worker past server.admission's bound.
  if (admission) tool.admit = gated_admission(std::move(admission));
  server.add_tool(std::move(tool));
}

}  // namespace mcpclass::service
