// Passages ranked for a query by a cross-encoder reranker (classify::Classifier::rerank): the one
// function every entry point answers with — the MCP tool `rerank` (register_reranking), `POST
// /rerank` in text-embeddings-inference's and the Jina / Cohere / vLLM shapes, `mcpclass rerank`,
// the C ABI's mcpc_rerank_json and so the Go and Python bindings.
// Thread-safety: rerank() may be called concurrently; registration is a one-off.
#pragma once

#include "mcpclass/classify/classifier.hpp"
#include "mcpclass/server/server.hpp"
#include "mcpclass/service/tool_metrics.hpp"
#include "mcpclass/util/admission_gate.hpp"
#include "mcpclass/util/limits.hpp"

#include <boost/json.hpp>

#include <cstddef>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <vector>

namespace mcpclass::service {

/// Passages one reranking scores unless `server.max_rerank_documents` says otherwise.
inline constexpr std::size_t kDefaultMaxRerankDocuments = 128;

/// A request rerank() refuses: no passages or more than the limit (too_many() then), a query or
/// passage that is empty, too long or not UTF-8 (named `query` or `documents[i]`), top_n 0. The
/// message says which.
class RerankRequestError : public std::runtime_error {
 public:
  RerankRequestError(const std::string& message, bool too_many = false)
      : std::runtime_error(message), too_many_(too_many) {}
  /// The passages were more than the limit (HTTP 413 rather than 400).
  bool too_many() const noexcept { return too_many_; }

 private:
  bool too_many_;
};

/// What to rank. The views must outlive the call.
struct RerankRequest {
  std::string_view query;
  std::vector<std::string_view> documents;
  /// Results kept, the highest scores (all when unset or larger than documents).
  std::optional<std::size_t> top_n;
};

struct RerankLimits {
  std::size_t max_text_length = util::limits::kMaxTextLength;  ///< Per text, in code points.
  std::size_t max_documents = kDefaultMaxRerankDocuments;
};

/// One passage's place in the ranking.
struct RankedDocument {
  std::size_t index = 0;  ///< Its position in RerankRequest::documents.
  classify::RerankScore score;
};

/// The passages by descending score (ties in request order), cut to top_n. Throws
/// RerankRequestError for a bad request (checked before any model runs), ClassifyError when the
/// classifier is no reranker or fails.
std::vector<RankedDocument> rerank(const classify::Classifier& classifier,
                                   const RerankRequest& request, const RerankLimits& limits = {},
                                   const classify::ClassifyOptions& options = {});

/// `{"results": [{"index", "relevance_score", "document": {"text"}}]}` (document only with
/// `with_documents`), the Jina / Cohere / vLLM rerank answer's results.
boost::json::object rerank_results(const std::vector<RankedDocument>& ranked,
                                   const RerankRequest& request, bool with_documents);

/// The `rerank` tool's arguments, also mcpc_rerank_json's request.
struct RerankArguments {
  RerankRequest request;  ///< Views into the arguments object.
  bool return_documents = false;
};

/// Reads `{query, documents, top_n?, return_documents?}`. Throws RerankRequestError naming the
/// key for a missing or mistyped one or another key.
RerankArguments read_rerank_arguments(const boost::json::object& args);

/// Registers tool `rerank` (inputSchema {query, documents, top_n?, return_documents?},
/// outputSchema rerank_results()'s). Register it only for a classifier that reranks(); the
/// server keeps the classifier alive. With `admission` (`server.admission`) each call takes a
/// place in that gate as classify_text's do, or is refused with -32010.
void register_reranking(server::Server& server,
                        std::shared_ptr<const classify::Classifier> classifier,
                        const RerankLimits& limits, std::shared_ptr<ToolMetrics> metrics = nullptr,
                        std::shared_ptr<util::AdmissionGate> admission = nullptr);

}  // namespace mcpclass::service
