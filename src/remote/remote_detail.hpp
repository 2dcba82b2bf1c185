// Internal: the pure parts of the remote classifier (tool results → categories and
// classifications, with every check a router applies).
#pragma once

#include "mcpclass/remote/remote_classifier.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace mcpclass::remote::detail {

/// The JSON object a classification tool returned: `structuredContent` when it is an object,
/// else `content[0].text` parsed. Throws RemoteProtocolError for isError results,
/// RemoteInvalidResult for anything unreadable.
json::object tool_payload(const json::object& result, std::string_view tool);

/// The categories of a list_categories result plus, when absent, the fallback category (last).
/// `remote_count` receives the number of categories the server named. Throws RemoteInvalidResult
/// (and RemoteProtocolError when `expected` does not match).
classify::CategorySet parse_categories(const json::object& payload, const std::string& fallback,
                                       std::optional<std::size_t> expected,
                                       std::size_t& remote_count);

/// Validates a classify_text payload against the first `remote_count` categories and turns it
/// into a Classification over `categories`; applies the threshold. Throws RemoteInvalidResult.
/// A rerank tool's `{"results": [{index, relevance_score}]}` as scores in passage order
/// (score and logit both the relevance_score). Throws RemoteInvalidResult unless it ranks each
/// of the `documents` passages exactly once with a finite score.
std::vector<classify::RerankScore> parse_rerank_scores(const json::object& payload,
                                                       std::size_t documents);

classify::Classification parse_classification(const json::object& payload,
                                              const classify::CategorySet& categories,
                                              std::size_t remote_count, double threshold,
                                              const std::string& fallback);

}  // namespace mcpclass::remote::detail
