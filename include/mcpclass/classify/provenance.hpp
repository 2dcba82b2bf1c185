// What produced a classification: the classifier kind, its model, tokenizer and category set,
// the service generation that served it, and whether the answer came from the result cache or a
// fallback. Every answer path (MCP `_meta`, the REST dialect, /classify headers, the C ABI,
// `route` headers, /health) shows this one value. Plain values and pure functions: thread-safe.
#pragma once

#include <boost/json.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mcpclass::classify {

namespace json = boost::json;

class Classifier;
struct Classification;

/// The `_meta` key of a classify_text result that carries Provenance::to_json().
inline constexpr std::string_view kMetaProvenance = "io.mcpclass/provenance";

struct Provenance {
  std::string kind;              ///< Classifier::kind(), e.g. "rules".
  std::string model_id;          ///< Classifier::model_id(): checksum of the weights or rules.
  std::string tokenizer_id;      ///< Classifier::tokenizer_id(); empty = the classifier has none.
  std::string taxonomy_id;       ///< taxonomy_id() of the category names in class-index order.
  std::uint64_t generation = 0;  ///< The service generation (1 at start, +1 per reload).
  bool cached = false;           ///< Served from the result cache (server.cache).
  bool fallback = false;  ///< A fallback answered (composite: local after the remote failed).

  /// `{kind, model_id, tokenizer_id (null when none), taxonomy_id, generation, cached, fallback}`.
  json::object to_json() const;
  /// This provenance with the cached/fallback flags of one result.
  Provenance of(const Classification& c) const;
  /// The same as HTTP headers: X-Mcpclass-Classifier, -Model-Id, -Tokenizer (when there is one),
  /// -Taxonomy, -Generation, -Cached and -Fallback ("true"/"false"). Empty ids are left out.
  std::vector<std::pair<std::string, std::string>> headers() const;
};

/// The classifier's fixed part (kind, model, tokenizer, taxonomy) at `generation`, flags false.
/// Calls model_id(), which may hash files: call it once per load, not per request.
Provenance provenance_of(const Classifier& classifier, std::uint64_t generation);

/// "fnv1a64:<16 hex digits>" of `bytes` (FNV-1a, 64 bits).
std::string fnv1a64_id(std::string_view bytes);

/// fnv1a64_id() over the names in order (each ended by a NUL byte): the same for the same
/// ordered names, different when a reload renames, adds, drops or reorders one.
std::string taxonomy_id(const std::vector<std::string>& names);

}  // namespace mcpclass::classify
