// Internal: the rerank endpoints' shapes on the server side (docs/http-classify.md):
// text-embeddings-inference's `POST /rerank` `{"query", "texts", "raw_scores"?, "return_text"?,
// "truncate"?, "truncation_direction"?}` answered by `[{index, score, text?}]`, best first; and
// the Jina / Cohere / vLLM form on `/rerank`, `/v1/rerank` and `/v2/rerank`, `{"model"?, "query",
// "documents", "top_n"?, "return_documents"?}` answered by `{model, results: [{index,
// relevance_score, document?: {text}}]}`. `/rerank` tells them apart by `texts` or `documents`.
// Thread-safety: pure functions; reentrant.
#pragma once

#include "mcpclass/service/reranking.hpp"
#include "service/http_classify_wire.hpp"

#include <boost/json.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace mcpclass::service::detail {

inline constexpr std::string_view kRerankPath = "/rerank";
inline constexpr std::string_view kRerankV1Path = "/v1/rerank";
inline constexpr std::string_view kRerankV2Path = "/v2/rerank";

/// Whether `path` is one of the rerank endpoints.
bool is_rerank_path(std::string_view path);

/// A request whose shape passed (its texts are checked by service::rerank()).
struct RerankCall {
  bool tei = false;  ///< text-embeddings-inference's shape: `texts`, answered as a list
  std::string query;
  std::vector<std::string> documents;
  std::optional<std::size_t> top_n;
  bool return_documents = false;  ///< return_documents, or TEI's return_text
  bool raw_scores = false;        ///< TEI: the logits rather than the activated scores
  /// The request as service::rerank() takes it, viewing query and documents.
  RerankRequest request() const;
};

/// Checks the Content-Type (415), then the body (400: not a JSON object, a key the shape does
/// not take, no query, texts or documents that are not a list of strings (the Jina / Cohere
/// shape also takes `{"text"}` objects), top_n not a positive integer, a flag not a boolean,
/// truncation_direction other than Right).
std::variant<RerankCall, ClassifyRefusal> read_rerank_call(std::string_view content_type,
                                                           std::string_view body,
                                                           std::string_view path);

/// The answer of `call`'s shape; `model` names the reranker in the Jina / Cohere shape.
boost::json::value rerank_answer(const RerankCall& call, const std::vector<RankedDocument>& ranked,
                                 const std::string& model);

}  // namespace mcpclass::service::detail
