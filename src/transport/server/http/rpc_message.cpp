#include "transport/server/http/rpc_message.hpp"

#include "mcpclass/jsonrpc/message.hpp"

#include <boost/json.hpp>

#include <utility>

namespace mcpclass::transport::server {

namespace json = boost::json;

std::string rpc_error_body(int code, std::string message) {
  return json::serialize(jsonrpc::make_error(std::nullopt, {code, std::move(message)}));
}

bool is_error_message(const std::optional<json::value>& m) {
  if (!m) return false;
  if (const auto* o = m->if_object()) return o->contains("error");
  if (const auto* a = m->if_array()) {
    for (const auto& item : *a) {
      if (item.is_object() && item.get_object().contains("error")) return true;
    }
  }
  return false;
}

bool has_request(const json::value& v) {
  auto one = [](const json::value& m) {
    const auto* o = m.if_object();
    if (!o) return true;  // invalid messages are answered with an error
    const auto* id = o->if_contains("id");
    return o->contains("method") && id && !id->is_null();
  };
  if (const auto* a = v.if_array()) {
    for (const auto& item : *a) {
      if (one(item)) return true;
    }
    return a->empty();
  }
  return one(v);
}

std::string method_of(const json::value& v) {
  if (const auto* o = v.if_object()) {
    if (const auto* m = o->if_contains("method"); m && m->is_string()) {
      return std::string(m->get_string());
    }
    return "response";
  }
  return v.is_array() ? "batch" : "invalid";
}

}  // namespace mcpclass::transport::server
