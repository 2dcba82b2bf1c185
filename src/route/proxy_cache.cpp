// The semantic cache's part in a request: a hit answered in the form the client asked for, and
// the answer of a cacheable miss stored once it ended cleanly.
#include "route/proxy_stages.hpp"

#include "route/cached_answer.hpp"

#include <fmt/format.h>

#include <chrono>
#include <string>
#include <utility>

namespace mcpclass::route {

using transport::server::HttpHeaders;

// The semantic cache of `router`'s configuration: `previous`'s when it fits (a reload keeps the
// answers), else a new one.
std::shared_ptr<SemanticCache> cache_for(const Router& router,
                                         const std::shared_ptr<SemanticCache>& previous,
                                         const RedisLink::Log& log) {
  const auto& s = router.route_settings().semantic_cache;
  if (!s.enabled) return nullptr;
  const auto encoder = router.encoder();
  if (previous && previous->fits(s, encoder.get())) return previous;
  return std::make_shared<SemanticCache>(s, encoder, log);
}

// A hit of the semantic cache is answered here, in the form the client asked for; a
// cacheable miss keeps its ticket, so that its answer is stored when it ends cleanly.
bool RouteProxy::Impl::answered_from_cache(Forward& fwd) {
  // Answers are kept and replayed in the chat completions shapes only.
  if (fwd.api != RequestApi::chat_completions) return false;
  // A request forwarded unclassified (fail-open) skips the cache. Its look-up would embed the
  // prompt, the very work admission just refused a place for, and wait on a shared cache's
  // Redis wherever the refusal happened: on the I/O thread that read the request, which serves
  // other requests (/health among them). Queued on the workers instead, it would bypass the
  // gate's bound on the work waiting there.
  if (fwd.failed_open) return false;
  const auto& e = fwd.evaluation;
  fwd.cache = open_ticket(fwd.generation->cache, e, *fwd.generation->router);
  if (!fwd.cache) return false;
  const auto t0 = Clock::now();
  const auto hit = fwd.cache->cache->lookup(fwd.cache->query, fwd.cache->threshold);
  if (!hit) return false;
  const double lookup_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  const double encode_ms = fwd.cache->query.encode_ms;
  fwd.cache.reset();
  HttpHeaders headers = std::move(fwd.decision_headers);
  // The lookup's time and the encoder's share of it, so that the search's own cost shows.
  headers.emplace_back(
      "Server-Timing",
      fmt::format("cache-lookup;dur={:.3f}, cache-encode;dur={:.3f}", lookup_ms, encode_ms));
  headers.emplace_back("x-mcpclass-model", e.model);
  headers.emplace_back("x-vsr-cache-hit", "true");
  headers.emplace_back("x-mcpclass-cache-similarity", fmt::format("{:.4f}", hit->similarity));
  const auto* stream = e.body.if_contains("stream");
  const std::string id = fmt::format("chatcmpl-cache-{}", ++cache_answers);
  if (stream && stream->is_bool() && stream->get_bool()) {
    headers.emplace_back("Content-Type", "text/event-stream");
    headers.emplace_back("Cache-Control", "no-cache");
    fwd.response->respond(200, std::move(headers), answer_sse(hit->answer, id));
  } else {
    respond_json(*fwd.response, 200, std::move(headers), answer_json(hit->answer, id));
  }
  return true;
}

// `fwd`'s answer from upstream `name` ended cleanly: a cacheable miss stores it, when the routed
// model itself answered (not a fallback).
void RouteProxy::Impl::store_answer(Forward& fwd, const std::string& name) {
  if (fwd.cache && name == fwd.evaluation.model)
    fwd.cache->finish(fwd.status, fwd.buffered ? std::string_view(fwd.body) : "");
}

}  // namespace mcpclass::route