// Router REST dialect ↔ JSON-RPC.
#include "transport/server/http/router_dialect.hpp"

#include "mcpclass/jsonrpc/message.hpp"
#include "transport/server/http/rpc_message.hpp"

#include <boost/json.hpp>

namespace mcpclass::transport::server {

namespace json = boost::json;

namespace {

RouterReply error_reply(unsigned status, int code, std::string message) {
  json::object error{{"code", code}, {"message", std::move(message)}};
  return {status, json::serialize(json::object{{"error", std::move(error)}})};
}

bool blank(std::string_view s) {
  return s.find_first_not_of(" \t\r\n") == std::string_view::npos;
}

}  // namespace

std::variant<json::value, RouterReply> router_request(std::string_view method,
                                                      std::string_view body,
                                                      const jsonrpc::ParseLimits& limits) {
  json::value params;  // null = absent
  if (!blank(body)) {
    auto parsed = jsonrpc::parse_json(body, limits);
    if (auto* error = std::get_if<jsonrpc::Error>(&parsed)) {
      return error_reply(400, error->code, error->message);
    }
    json::value& v = std::get<json::value>(parsed);
    if (!v.is_object()) {
      return error_reply(400, jsonrpc::kInvalidParams,
                         "Invalid params: the body must be a JSON object (the params, or "
                         "{\"method\":..,\"params\":{..}})");
    }
    json::object& o = v.get_object();
    // The envelope forms: {"method":"","params":{..}} and full JSON-RPC requests.
    bool envelope = o.contains("method") || o.contains("jsonrpc");
    for (const auto& kv : o) {
      const std::string_view key = kv.key();
      if (key != "jsonrpc" && key != "id" && key != "method" && key != "params") envelope = false;
    }
    if (envelope) {
      if (auto* p = o.if_contains("params"); p && !p->is_null()) params = std::move(*p);
    } else if (!o.empty()) {
      params = std::move(v);
    }
  }
  json::object message{{"jsonrpc", "2.0"}, {"method", method}};
  if (!method.starts_with("notifications/")) message["id"] = kRouterRequestId;
  if (!params.is_null()) message["params"] = std::move(params);
  return json::value(std::move(message));
}

RouterReply router_reply(const std::optional<json::value>& final_message, bool request) {
  if (!final_message && !request) return {202, {}};
  if (!final_message) {
    return {503, json::serialize(
                     json::object{{"error", json::object{{"code", jsonrpc::kInternalError},
                                                         {"message", kCancelledBeforeAnswer}}}})};
  }
  const json::object* o = final_message->if_object();
  if (!o) return {200, json::serialize(*final_message)};
  if (const auto* result = o->if_contains("result")) return {200, json::serialize(*result)};
  if (const auto* error = o->if_contains("error"); error && error->is_object()) {
    const auto* code = error->get_object().if_contains("code");
    const std::int64_t c =
        code && code->is_int64() ? code->get_int64() : std::int64_t{jsonrpc::kInternalError};
    unsigned status = 500;
    if (auto retry_after = overload_retry_after(final_message)) {
      return {503, json::serialize(json::object{{"error", *error}}), std::move(*retry_after)};
    }
    if (c == jsonrpc::kMethodNotFound) {
      status = 404;
    } else if (c == jsonrpc::kParseError || c == jsonrpc::kInvalidRequest ||
               c == jsonrpc::kInvalidParams || c == jsonrpc::kResourceNotFound) {
      status = c == jsonrpc::kResourceNotFound ? 404 : 400;
    }
    return {status, json::serialize(json::object{{"error", *error}})};
  }
  return {200, json::serialize(*final_message)};
}

}  // namespace mcpclass::transport::server
