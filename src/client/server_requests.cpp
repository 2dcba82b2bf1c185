#include "client/server_requests.hpp"

#include <fmt/format.h>

namespace mcpclass::client {

namespace {

const json::object& params_object(const jsonrpc::Request& request) {
  static const json::object empty;
  if (request.params.is_null()) return empty;
  if (!request.params.is_object())
    throw jsonrpc::ProtocolError(jsonrpc::kInvalidParams, "params must be an object");
  return request.params.get_object();
}

[[noreturn]] void unsupported(const std::string& method) {
  throw jsonrpc::ProtocolError(
      jsonrpc::kMethodNotFound,
      fmt::format("Method not found: {} (not supported by this client)", method));
}

json::value elicit(const jsonrpc::Request& request, const ClientOptions& options) {
  const auto& params = params_object(request);
  ElicitationRequest e;
  e.params = params;
  if (const auto* m = params.if_contains("message"); m != nullptr && m->is_string())
    e.message = m->get_string();
  if (const auto* s = params.if_contains("requestedSchema"); s != nullptr && s->is_object())
    e.requested_schema = s->get_object();
  ElicitationResponse r = options.callbacks.elicitation(e);
  json::object result{{"action", r.action}};
  if (r.action == "accept")
    result["content"] = options.apply_elicitation_defaults
                            ? apply_schema_defaults(std::move(r.content), e.requested_schema)
                            : std::move(r.content);
  return result;
}

}  // namespace

json::value answer_server_request(const jsonrpc::Request& request, const ClientOptions& options) {
  const auto& cb = options.callbacks;
  if (request.method == "ping") return json::object{};
  if (request.method == "sampling/createMessage") {
    if (!cb.sampling) unsupported(request.method);
    return cb.sampling(params_object(request));
  }
  if (request.method == "elicitation/create") {
    if (!cb.elicitation) unsupported(request.method);
    return elicit(request, options);
  }
  if (request.method == "roots/list") {
    if (!cb.roots) unsupported(request.method);
    return json::object{{"roots", cb.roots()}};
  }
  unsupported(request.method);
}

}  // namespace mcpclass::client
