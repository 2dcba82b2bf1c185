#include "mcpclass/service/tool_admission.hpp"

#include "mcpclass/classify/cached_classifier.hpp"
#include "mcpclass/jsonrpc/message.hpp"
#include "mcpclass/server/tool_admission.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cmath>

namespace mcpclass::service {

namespace json = boost::json;
using util::AdmissionGate;
using util::AdmissionRefusal;

namespace {

// The call's deadline from `_meta`: now + the timeout it names. A timeout that is not a
// non-negative number of milliseconds is a bad request, said at once.
std::optional<AdmissionGate::Clock::time_point> deadline_of(const json::object& params) {
  const json::value* p = params.if_contains("_meta");
  const json::object* meta = p ? p->if_object() : nullptr;
  const json::value* timeout = meta ? meta->if_contains(server::kMetaRequestTimeout) : nullptr;
  if (timeout == nullptr || timeout->is_null()) return std::nullopt;
  const double ms = timeout->is_number() ? timeout->to_number<double>() : -1.0;
  if (!std::isfinite(ms) || ms < 0 || ms > 86'400'000) {
    throw jsonrpc::ProtocolError(
        jsonrpc::kInvalidParams,
        fmt::format("Invalid params: _meta[\"{}\"] must be a number of milliseconds in [0, "
                    "86400000]",
                    server::kMetaRequestTimeout));
  }
  return AdmissionGate::Clock::now() +
         std::chrono::microseconds(static_cast<std::int64_t>(ms * 1000.0));
}

[[noreturn]] void refuse(const AdmissionGate& gate, AdmissionRefusal why) {
  const auto retry_ms = gate.options().retry_after.count();
  const bool expired = why == AdmissionRefusal::expired;
  throw jsonrpc::ProtocolError(
      server::kOverloaded,
      expired ? fmt::format("Overloaded: the request's deadline passed before it could be "
                            "classified (server.admission: {})",
                            gate.limits_text())
              : fmt::format("Overloaded: every classification slot and queue place is taken "
                            "(server.admission: {}); retry after {} ms",
                            gate.limits_text(), retry_ms),
      json::object{{"reason", expired ? "expired" : "rejected"},
                   {"retryAfterMs", retry_ms},
                   {"maxConcurrent", gate.options().max_concurrent},
                   {"maxQueue", gate.options().max_queue}});
}

class Place final : public server::ToolAdmission {
 public:
  explicit Place(std::unique_ptr<AdmissionGate::Ticket> ticket, const AdmissionGate& gate)
      : ticket_(std::move(ticket)), gate_(gate) {}
  void start() override {
    if (const auto why = ticket_->start(); why != AdmissionRefusal::none) refuse(gate_, why);
  }
  void finish(bool is_error) override {
    if (!is_error) ticket_->succeeded();
  }

 private:
  std::unique_ptr<AdmissionGate::Ticket> ticket_;
  const AdmissionGate& gate_;  // the ticket keeps it alive
};

std::unique_ptr<server::ToolAdmission> take_place(
    const std::shared_ptr<AdmissionGate>& gate,
    std::optional<AdmissionGate::Clock::time_point> deadline) {
  auto admission = gate->admit(deadline);
  if (!admission.ticket) refuse(*gate, admission.refusal);
  return std::make_unique<Place>(std::move(admission.ticket), *gate);
}

// Whether the cache in front of the classifier would answer `params`' text now.
bool cached(const classify::CachedClassifier* cache, const json::object& params) {
  if (cache == nullptr) return false;
  const json::value* a = params.if_contains("arguments");
  const json::object* args = a ? a->if_object() : nullptr;
  const json::value* text = args ? args->if_contains("text") : nullptr;
  if (text == nullptr || !text->is_string()) return false;
  const json::value* w = args->if_contains("with_probabilities");
  const bool with_probabilities = w != nullptr && w->is_bool() && w->get_bool();
  return cache->holds(text->get_string(), classify::ClassifyOptions{with_probabilities});
}

}  // namespace

server::ToolAdmit classify_admission(std::shared_ptr<AdmissionGate> gate,
                                     std::shared_ptr<const classify::Classifier> classifier) {
  return [gate = std::move(gate), classifier = std::move(classifier)](
             const json::object& params) -> std::unique_ptr<server::ToolAdmission> {
    const auto deadline = deadline_of(params);
    if (cached(dynamic_cast<const classify::CachedClassifier*>(classifier.get()), params))
      return nullptr;
    return take_place(gate, deadline);
  };
}

server::ToolAdmit gated_admission(std::shared_ptr<AdmissionGate> gate) {
  return [gate = std::move(gate)](
             const json::object& params) -> std::unique_ptr<server::ToolAdmission> {
    return take_place(gate, deadline_of(params));
  };
}

}  // namespace mcpclass::service
