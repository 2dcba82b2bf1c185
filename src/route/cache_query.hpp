// Internal: what the semantic cache finds an answer by (docs/route.md, "Semantic cache"): the
// query text the classifier sees, and the scope an answer may be reused in, which holds every
// other part of the request as the upstream receives it (model name, reasoning fields, system
// messages, parameters, the user message's images and other non-text parts, the decision's
// header mutations). Pure functions over JSON values.
#pragma once

#include "mcpclass/config/route_settings.hpp"

#include <boost/json/object.hpp>

#include <optional>
#include <string>
#include <vector>

namespace mcpclass::route {

/// What a cached answer is found by.
struct CacheQuery {
  std::string scope;  ///< SHA-256 of everything but the query text that reaches the upstream
  std::string exact;  ///< SHA-256 of `scope` and `text`
  std::string text;   ///< the user's query
  std::vector<float> embedding;  ///< filled by lookup() when an encoder is configured
  double encode_ms = 0;          ///< the encoder's own time in lookup() (Server-Timing)
};

/// The query of `request`, the body as the routed model's upstream receives it
/// (Router::upstream_request), or nullopt when its answer is not cached: a later turn of a
/// conversation (assistant or tool messages, several user messages), `n` > 1, no user text.
/// `route` is what else decides the answer besides the body (the route.models key and the
/// decision's header mutations, serialized).
std::optional<CacheQuery> cache_query(const boost::json::object& request, const std::string& route,
                                      config::RouteText text);

/// The exact key of `text` in `scope`: what an entry read from Redis must be stored under.
std::string exact_key(const std::string& scope, const std::string& text);

}  // namespace mcpclass::route
