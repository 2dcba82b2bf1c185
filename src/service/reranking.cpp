#include "mcpclass/service/reranking.hpp"

#include "mcpclass/service/mcp_tools.hpp"
#include "mcpclass/service/tool_admission.hpp"
#include "service/tool_results.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace mcpclass::service {

namespace json = boost::json;

namespace {

json::object input_schema(std::size_t max_documents) {
  auto schema = json::parse(R"j({"type":"object",
    "properties":{"query":{"type":"string","description":"The query the documents are ranked for"},
                  "documents":{"type":"array","minItems":1,"items":{"type":"string"},
                    "description":"The passages to score against the query"},
                  "top_n":{"type":"integer","minimum":1,
                    "description":"How many of the best documents to return (default: all)"},
                  "return_documents":{"type":"boolean","default":false,
                    "description":"Whether each result repeats its document's text"}},
    "required":["query","documents"]})j")
                    .as_object();
  schema["properties"].as_object()["documents"].as_object()["maxItems"] =
      static_cast<std::int64_t>(max_documents);  // valijson reads int64, not uint64
  return schema;
}

json::object output_schema() {
  return json::parse(R"j({"type":"object",
    "properties":{"results":{"type":"array","items":{"type":"object",
      "properties":{"index":{"type":"integer","minimum":0,"description":"The document's position in documents"},
                    "relevance_score":{"type":"number","description":"Higher is more relevant"},
                    "document":{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}},
      "required":["index","relevance_score"]}}},
    "required":["results"]})j")
      .as_object();
}

}  // namespace

std::vector<RankedDocument> rerank(const classify::Classifier& classifier,
                                   const RerankRequest& request, const RerankLimits& limits,
                                   const classify::ClassifyOptions& options) {
  if (request.documents.empty()) throw RerankRequestError("documents must not be empty");
  if (request.documents.size() > limits.max_documents)
    throw RerankRequestError(fmt::format("documents has {} passages; the limit is {} "
                                         "(server.max_rerank_documents)",
                                         request.documents.size(), limits.max_documents),
                             true);
  if (request.top_n && *request.top_n == 0) throw RerankRequestError("top_n must be at least 1");
  if (auto problem = text_problem(request.query, limits.max_text_length))
    throw RerankRequestError("query: " + *problem);
  for (std::size_t i = 0; i < request.documents.size(); ++i)
    if (auto problem = text_problem(request.documents[i], limits.max_text_length))
      throw RerankRequestError(fmt::format("documents[{}]: {}", i, *problem));
  const auto scores = classifier.rerank(request.query, request.documents, options);
  std::vector<RankedDocument> ranked;
  ranked.reserve(scores.size());
  for (std::size_t i = 0; i < scores.size(); ++i) ranked.push_back({i, scores[i]});
  // By the logit: the activation may round two distinct logits to one score (a sigmoid
  // saturates), and the logit keeps them apart in the model's own order.
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const auto& a, const auto& b) { return a.score.logit > b.score.logit; });
  if (request.top_n && *request.top_n < ranked.size()) ranked.resize(*request.top_n);
  return ranked;
}

json::object rerank_results(const std::vector<RankedDocument>& ranked, const RerankRequest& request,
                            bool with_documents) {
  json::array results;
  results.reserve(ranked.size());
  for (const auto& r : ranked) {
    json::object o{{"index", r.index}, {"relevance_score", r.score.score}};
    if (with_documents) o["document"] = json::object{{"text", request.documents[r.index]}};
    results.emplace_back(std::move(o));
  }
  return {{"results", std::move(results)}};
}

RerankArguments read_rerank_arguments(const json::object& args) {
  RerankArguments out;
  bool has_query = false, has_documents = false;
  for (const auto& kv : args) {
    const std::string_view key = kv.key();
    const auto& v = kv.value();
    if (key == "query") {
      if (!v.is_string()) throw RerankRequestError("query must be a string");
      out.request.query = v.get_string();
      has_query = true;
    } else if (key == "documents") {
      const auto* list = v.if_array();
      if (list == nullptr) throw RerankRequestError("documents must be a list of strings");
      for (std::size_t i = 0; i < list->size(); ++i) {
        if (!(*list)[i].is_string())
          throw RerankRequestError(fmt::format("documents[{}] must be a string", i));
        out.request.documents.push_back((*list)[i].get_string());
      }
      has_documents = true;
    } else if (key == "top_n") {
      if (!v.is_int64() || v.get_int64() < 1)
        throw RerankRequestError("top_n must be a positive integer");
      out.request.top_n = static_cast<std::size_t>(v.get_int64());
    } else if (key == "return_documents") {
      if (!v.is_bool()) throw RerankRequestError("return_documents must be a boolean");
      out.return_documents = v.get_bool();
    } else {
      throw RerankRequestError(fmt::format(
          "unknown key '{}' (a reranking takes query, documents, top_n and return_documents)",
          key));
    }
  }
  if (!has_query) throw RerankRequestError("query is required");
  if (!has_documents) throw RerankRequestError("documents is required");
  return out;
}

void register_reranking(server::Server& server,
                        std::shared_ptr<const classify::Classifier> classifier,
                        const RerankLimits& limits, std::shared_ptr<ToolMetrics> metrics,
                        std::shared_ptr<util::AdmissionGate> admission) {
  server::Tool tool;
  tool.name = "rerank";
  tool.title = "Rerank documents";
  tool.description =
      "Score documents (passages) for a query with a cross-encoder reranker and return them "
      "best first: {results: [{index, relevance_score, document?}]}, index being the document's "
      "position in documents. top_n keeps the best n.";
  tool.input_schema = input_schema(limits.max_documents);
  tool.output_schema = output_schema();
  tool.annotations = json::object{{"readOnlyHint", true}, {"idempotentHint", true}};
  const std::string kind = classifier->kind();
  tool.handler = [classifier, limits](const json::object& args, server::RequestContext&) {
    try {
      const auto call = read_rerank_arguments(args);
      return detail::structured(rerank_results(rerank(*classifier, call.request, limits),
                                               call.request, call.return_documents));
    } catch (const RerankRequestError& e) {
      return server::ToolResult::error(e.what());
    }
  };
  tool.handler = detail::timed(std::move(tool.handler), std::move(metrics), tool.name, kind);
  // A reranking runs the model once per document: it waits in classify_text's gate.
  if (admission) tool.admit = gated_admission(std::move(admission));
  server.add_tool(std::move(tool));
}

}  // namespace mcpclass::service
