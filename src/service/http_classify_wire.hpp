// Internal: the http_classify contract's shapes on the server side (docs/http-classify.md):
// `POST /classify` with `{"inputs": text | [texts]}` (or sentence pairs, `{"text", "text_pair"}`
// and lists of them, as the Hugging Face text-classification pipeline takes them) answered by
// the full distribution as
// `[{label, score}]` sorted by score (a list of them for a list of texts), the shape of a Hugging
// Face text-classification pipeline with top_k=None and of text-embeddings-inference's /predict;
// `POST /classify/spans` with the same inputs (and `parameters.aggregation_strategy`) answered by
// the token-classification pipeline's `[{entity_group, score, word, start, end}]`.
// Thread-safety: pure functions; reentrant.
#pragma once

#include "mcpclass/classify/category.hpp"
#include "mcpclass/classify/classification.hpp"

#include <boost/json.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace mcpclass::service::detail {

/// The paths of the contract.
inline constexpr std::string_view kClassifyPath = "/classify";
inline constexpr std::string_view kClassifySpansPath = "/classify/spans";
/// `POST /classify/<task>`: one task of a base shared by several adapters (/classify serves
/// classify_text's).
inline constexpr std::string_view kClassifyTaskPrefix = "/classify/";
/// Texts one request may carry (a longer list is refused with 413, before any is classified).
inline constexpr std::size_t kMaxClassifyInputs = 128;

/// A request that passed every check.
struct ClassifyCall {
  std::vector<std::string> inputs;
  /// Sentence pairs: text_pairs[i] is the second text of inputs[i] (empty: single texts).
  std::vector<std::string> text_pairs;
  bool batch = false;  ///< `inputs` was a list: the answer is a list of answers
  /// /classify/spans: `parameters.aggregation_strategy`, when given.
  std::optional<std::string> aggregation;
};

/// Why a request is refused: the HTTP status, the error_type and a message naming the problem.
struct ClassifyRefusal {
  unsigned status = 400;
  std::string type;
  std::string message;
};

/// The body as a JSON object, or its refusal: 415 unless the Content-Type is application/json,
/// 400 when the body is not JSON or not an object (the message shows `shape`, what is expected).
std::variant<boost::json::object, ClassifyRefusal> read_json_object_body(
    std::string_view content_type, std::string_view body, std::string_view shape);

/// Checks the Content-Type (415 unless application/json), the body (400: not JSON, not an
/// object, no `inputs`, a key the path does not take, a text that is not a string, empty, too
/// long or not UTF-8, naming `inputs[i]`; a pair without `text` or `text_pair`, with another
/// key, on /classify/spans, or a list mixing texts and pairs) and the number of texts (413 past
/// kMaxClassifyInputs).
std::variant<ClassifyCall, ClassifyRefusal> read_classify_call(std::string_view content_type,
                                                               std::string_view body, bool spans,
                                                               std::size_t max_text_length);

/// `{"error": message, "error_type": type}`, as text-embeddings-inference words its errors.
std::string classify_error_body(std::string_view type, std::string_view message);

/// Every category with its probability, `[{label, score}]`, highest score first (ties in class
/// order).
boost::json::array label_scores(const classify::Classification& c,
                                const classify::CategorySet& categories);

/// The pipeline's spans from detect_spans()' `{"spans": [...]}`: each span without the byte
/// offsets mcpclass adds (`entity_group` or `entity`, `score`, `word`, `start`, `end`[, `index`]).
boost::json::array pipeline_spans(const boost::json::object& detected);

}  // namespace mcpclass::service::detail
