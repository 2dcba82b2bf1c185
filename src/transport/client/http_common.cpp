#include "transport/client/http_common.hpp"

#include "mcpclass/client/errors.hpp"
#include "mcpclass/jsonrpc/message.hpp"
#include "mcpclass/util/trace_context.hpp"

namespace mcpclass::transport::client::detail {

std::exception_ptr transport_error(net::HttpFailure kind, const std::string& message) {
  if (kind == net::HttpFailure::certificate)
    return std::make_exception_ptr(mcpclass::client::CertificateError(message));
  return std::make_exception_ptr(mcpclass::client::TransportError(message));
}

std::vector<std::pair<std::string, std::string>> expanded_headers(
    const HttpClientOptions& options) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [name, value] : options.headers) out.emplace_back(name, expand_env(value));
  return out;
}

MessageKind kind_of(const boost::json::value& message) {
  MessageKind k;
  if (!message.is_object()) return k;
  const auto& o = message.get_object();
  if (const auto* m = o.if_contains("method"); m != nullptr && m->is_string())
    k.method = m->get_string();
  if (const auto* id = o.if_contains("id"); id != nullptr && !k.method.empty()) {
    if (id->is_int64()) k.request_id = jsonrpc::Id{id->get_int64()};
    if (id->is_string()) k.request_id = jsonrpc::Id{std::string(id->get_string())};
  }
  return k;
}

std::optional<boost::json::value> parse_body(std::string_view body) {
  auto parsed = jsonrpc::parse_json(body, {16 * 1024 * 1024, 64});
  if (auto* v = std::get_if<boost::json::value>(&parsed)) return std::move(*v);
  return std::nullopt;
}

bool answers(const boost::json::value& v, const jsonrpc::Id& id) {
  if (v.is_array()) {
    for (const auto& item : v.get_array())
      if (answers(item, id)) return true;
    return false;
  }
  if (!v.is_object()) return false;
  const auto& o = v.get_object();
  if (o.contains("method")) return false;
  const auto* vid = o.if_contains("id");
  if (vid == nullptr) return false;
  return *vid == jsonrpc::to_json(id);
}

void add_trace_headers(net::HttpRequest& request, const boost::json::value& message) {
  const auto* o = message.if_object();
  const auto* params = o ? o->if_contains("params") : nullptr;
  const auto* meta = params ? jsonrpc::meta_of(*params) : nullptr;
  if (meta == nullptr) return;
  const auto string_at = [meta](std::string_view key) {
    const auto* v = meta->if_contains(key);
    return v && v->is_string() ? std::string_view(v->get_string()) : std::string_view();
  };
  const auto parsed = util::parse_traceparent(string_at(util::kTraceparentHeader),
                                              string_at(util::kTracestateHeader));
  if (!parsed) return;
  request.headers.emplace_back(util::kTraceparentHeader, string_at(util::kTraceparentHeader));
  if (!parsed->tracestate.empty())
    request.headers.emplace_back(util::kTracestateHeader, parsed->tracestate);
}

std::string header_safe(std::string_view value) {
  bool ascii = true;
  for (const char c : value)
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) > 0x7e) ascii = false;
  if (ascii) return std::string(value);
  static constexpr char kTable[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string b64;
  unsigned buffer = 0;
  int bits = 0;
  for (const char c : value) {
    buffer = (buffer << 8) | static_cast<unsigned char>(c);
    bits += 8;
    while (bits >= 6) {
      bits -= 6;
      b64 += kTable[(buffer >> bits) & 0x3f];
    }
  }
  if (bits > 0) b64 += kTable[(buffer << (6 - bits)) & 0x3f];
  while (b64.size() % 4 != 0) b64 += '=';
  return "=?base64?" + b64 + "?=";
}

}  // namespace mcpclass::transport::client::detail
