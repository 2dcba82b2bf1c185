// The evaluation's own answers (a rejection, a block, an explanation), and the request the
// passthrough guard lets through, before the cache and the upstream see a request.
#include "route/proxy_stages.hpp"

#include "route/chat_request.hpp"

#include <boost/json.hpp>

#include <chrono>
#include <string>
#include <utility>

namespace mcpclass::route {

namespace json = boost::json;
using transport::server::HttpHeaders;

// True when the evaluation in fwd.evaluation is answered here; else the request is ready for
// its upstream (fwd.routed: a routed request, which the cache may answer first).
bool RouteProxy::Impl::answered_by_guard(Forward& fwd, bool explain, Clock::time_point t0) {
  auto& e = fwd.evaluation;
  HttpHeaders headers(e.response_headers.begin(), e.response_headers.end());
  if (e.action == RouteEvaluation::Action::reject) {
    respond_json(*fwd.response, e.status, std::move(headers), e.error_body);
    return true;
  }
  if (explain) {
    respond_json(*fwd.response, 200, std::move(headers), json::serialize(e.to_json()));
    return true;
  }
  if (e.action == RouteEvaluation::Action::passthrough) {
    const auto& upstream_model = fwd.generation->table->find(e.model)->settings.upstream_model;
    if (!e.forwarded.empty())  // route.passthrough_guard redacted it
      fwd.raw = std::move(e.forwarded);
    else if (!upstream_model.empty() && upstream_model != e.model)
      fwd.raw = replace_model(fwd.raw, upstream_model);
    metrics.routed("passthrough", e.model);
    fwd.decision_headers = std::move(headers);  // route.passthrough_guard's, if any
    return false;
  }
  fwd.raw.clear();
  metrics.evaluated(e, std::chrono::duration<double>(Clock::now() - t0).count());
  if (e.action == RouteEvaluation::Action::block) {
    respond_json(*fwd.response, e.status, std::move(headers), e.error_body);
    return true;
  }
  fwd.routed = true;
  fwd.decision_headers = std::move(headers);
  metrics.routed(!e.category.empty()   ? e.category
                 : !e.decision.empty() ? e.decision
                                       : std::string("fail_open"),
                 e.model);
  return false;
}

}  // namespace mcpclass::route
