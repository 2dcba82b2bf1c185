// A request's evaluation: its place at route.admission's gate, the router's decision (on the
// workers when the classifier is slow or Redis is waited on), and what a refused or failed
// classification gets: fail-open forwards it unclassified, fail-closed answers 503 (or 500).
#include "route/proxy_stages.hpp"

#include <fmt/format.h>

#include <optional>
#include <utility>

namespace mcpclass::route {

namespace json = boost::json;

// The admission gate of `router`'s configuration: `previous`'s when its limits are the same (a
// reload keeps its counts and the places taken), else a new one; null when there is none.
std::shared_ptr<util::AdmissionGate> gate_for(
    const Router& router, const std::shared_ptr<util::AdmissionGate>& previous) {
  const auto& limits = router.route_settings().admission.limits;
  // Rules decide on the I/O thread in microseconds: nothing waits, nothing to bound.
  if (limits.max_concurrent == 0 || !router.slow()) return nullptr;
  if (previous && previous->options().max_concurrent == limits.max_concurrent &&
      previous->options().max_queue == limits.max_queue &&
      previous->options().retry_after == limits.retry_after)
    return previous;
  return std::make_shared<util::AdmissionGate>(limits);
}

// Decides `request` for `fwd`: at once on this thread when rules decide and nothing waits on
// Redis, else on the workers, after a place at route.admission's gate.
void RouteProxy::Impl::evaluate(const std::shared_ptr<Forward>& fwd, json::object request,
                                bool explain, std::string conversation,
                                std::string_view request_timeout) {
  // Rules answer in microseconds: a hop to a worker would cost more than it spares. A
  // conversation kept in Redis, or a cache shared through it, waits on Redis, which the
  // connection's thread must not (it serves other requests, /health among them).
  const bool waits = (!conversation.empty() && conversations.shared()) ||
                     (fwd->generation->cache && fwd->generation->cache->shared());
  // A slow classifier's place is taken here, on the I/O thread, so that a refusal is at once.
  std::shared_ptr<util::AdmissionGate::Ticket> ticket;
  if (const auto& gate = fwd->generation->gate) {
    auto admission = gate->admit(util::deadline_after_ms(request_timeout));
    if (!admission.ticket) return overloaded(fwd, std::move(request), explain, admission.refusal);
    ticket = std::move(admission.ticket);
  }
  auto decide = [self = shared_from_this(), fwd, explain, key = std::move(conversation),
                 object = std::move(request), ticket = std::move(ticket)]() mutable {
    if (ticket) {
      if (const auto why = ticket->start(); why != util::AdmissionRefusal::none)
        return self->overloaded(fwd, std::move(object), explain, why);
    }
    self->decide(fwd, std::move(object), explain, key, ticket.get());
  };
  if (!fwd->generation->router->slow() && !waits) return decide();
  pool.post(std::move(decide));
}

// A request whose classification was refused (no place, or its deadline passed) or failed:
// route.admission's fail-open forwards it to its model unclassified, fail-closed answers 503
// (a failure: 500). An explanation is never forwarded.
void RouteProxy::Impl::overloaded(const std::shared_ptr<Forward>& fwd, json::object request,
                                  bool explain, util::AdmissionRefusal why,
                                  std::string_view failure) {
  const bool failed = why == util::AdmissionRefusal::none;
  const std::string_view reason = failed                                   ? "failed"
                                  : why == util::AdmissionRefusal::expired ? "expired"
                                                                           : "rejected";
  const auto& admission = fwd->generation->router->route_settings().admission;
  log(*fwd, fmt::format("classification {}{}{}: {}", reason, failed ? ": " : "", failure,
                        admission.fail_open && !explain ? "forwarded unclassified (fail-open)"
                                                        : "refused"));
  if (admission.fail_open && !explain) {
    metrics.failed_open(reason);
    fwd->evaluation =
        fwd->generation->router->unclassified(std::move(request), admission.model, fwd->api);
    fwd->evaluation.response_headers.emplace_back("x-mcpclass-fail-open", reason);
    fwd->failed_open = true;
    return dispatch(fwd, false, Clock::now());
  }
  if (failed)
    return error_response(fwd->api, *fwd->response, 500,
                          fmt::format("Classification failed: {}", failure), "server_error",
                          "classification_failed");
  metrics.refused(reason);
  const auto& gate = *fwd->generation->gate;
  const std::string message =
      why == util::AdmissionRefusal::expired
          ? fmt::format(
                "The request's deadline passed before it could be classified "
                "(route.admission: {})",
                gate.limits_text())
          : fmt::format(
                "Every classification slot and queue place is taken (route.admission: "
                "{}); retry later",
                gate.limits_text());
  error_response(fwd->api, *fwd->response, 503, message, "server_error",
                 fmt::format("classification_{}", reason),
                 {{"Retry-After", util::retry_after_header(gate.options().retry_after)}});
}

// The router's decision on `request` (with the conversation's kept one), then the stages after it.
void RouteProxy::Impl::decide(const std::shared_ptr<Forward>& fwd, json::object request,
                              bool explain, const std::string& conversation,
                              util::AdmissionGate::Ticket* ticket) {
  const auto& router = *fwd->generation->router;
  const auto t0 = Clock::now();
  const auto start_unix_nano = util::SpanRecord::now_unix_nano();
  auto& e = fwd->evaluation;
  // Fail-open forwards the request as it came when its classification fails.
  std::optional<json::object> original;
  if (router.route_settings().admission.fail_open && !explain) original = request;
  // The classification's span, the parent of a remote classifier's call.
  const auto classify_span = fwd->span.child();
  try {
    const auto kept = conversation.empty() ? std::nullopt : conversations.find(conversation);
    e = router.evaluate(std::move(request), options.max_text_length, explain,
                        kept ? &*kept : nullptr, fwd->api,
                        classify::ClassifyOptions{false, &classify_span, fwd->spans.get()});
    // An explanation changes nothing; a block keeps what the conversation had.
    if (!conversation.empty() && !explain && e.action == RouteEvaluation::Action::forward)
      conversations.keep(conversation, e.kept(), router.route_settings().conversation);
  } catch (const std::exception& ex) {
    record(*fwd, classify_span, "classify", util::SpanRecord::Kind::internal, start_unix_nano, {},
           ex.what());
    return overloaded(fwd, original ? std::move(*original) : json::object(), explain,
                      util::AdmissionRefusal::none, ex.what());
  }
  record(*fwd, classify_span, "classify", util::SpanRecord::Kind::internal, start_unix_nano,
         {{"mcpclass.category", e.category}, {"mcpclass.decision", e.decision}});
  if (ticket) ticket->succeeded();
  dispatch(fwd, explain, t0);
}

}  // namespace mcpclass::route