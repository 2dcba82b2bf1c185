#include "transport/server/http/rpc_message.hpp"

#include "mcpclass/jsonrpc/message.hpp"
#include "mcpclass/server/tool_admission.hpp"
#include "mcpclass/util/admission_gate.hpp"

#include <boost/json.hpp>

#include <cstdint>
#include <utility>

namespace mcpclass::transport::server {

namespace json = boost::json;

std::string rpc_error_body(int code, std::string message) {
  return json::serialize(jsonrpc::make_error(std::nullopt, {code, std::move(message)}));
}

std::optional<std::string> apply_request_timeout(json::value& body, std::string_view header) {
  if (auto error = util::request_timeout_error(header)) return error;
  const auto parsed = util::request_timeout_ms(header);
  if (!parsed) return std::nullopt;  // absent
  const auto one = [ms = *parsed](json::value& m) {
    auto* o = m.if_object();
    if (o == nullptr || !o->contains("method") || !o->contains("id")) return;
    json::value& params = (*o)["params"];
    if (params.is_null()) params = json::object();
    auto* p = params.if_object();
    if (p == nullptr) return;  // the engine says what is wrong with it
    json::value& meta = (*p)["_meta"];
    if (meta.is_null()) meta = json::object();
    if (auto* mo = meta.if_object(); mo && !mo->contains(mcpclass::server::kMetaRequestTimeout))
      (*mo)[mcpclass::server::kMetaRequestTimeout] = ms;
  };
  if (auto* a = body.if_array()) {
    for (auto& m : *a) one(m);
  } else {
    one(body);
  }
  return std::nullopt;
}

std::optional<std::string> overload_retry_after(const std::optional<json::value>& message) {
  const json::object* o = message ? message->if_object() : nullptr;
  const json::value* e = o ? o->if_contains("error") : nullptr;
  const json::object* error = e ? e->if_object() : nullptr;
  const json::value* code = error ? error->if_contains("code") : nullptr;
  if (code == nullptr || !code->is_int64() || code->get_int64() != mcpclass::server::kOverloaded)
    return std::nullopt;
  std::int64_t ms = 1000;
  if (const auto* d = error->if_contains("data"); d && d->is_object())
    if (const auto* r = d->get_object().if_contains("retryAfterMs"); r && r->is_int64())
      ms = r->get_int64();
  return util::retry_after_header(std::chrono::milliseconds(ms));
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
