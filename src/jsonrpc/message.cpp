#include "mcpclass/jsonrpc/message.hpp"

#include "jsonrpc/precise_json.hpp"

#include <fmt/format.h>

#include <boost/json/monotonic_resource.hpp>
#include <cmath>

namespace mcpclass::jsonrpc {

json::value to_json(const Id& id) {
  return std::visit([](const auto& v) { return json::value(v); }, id);
}

std::string id_key(const Id& id) {
  if (const auto* i = std::get_if<std::int64_t>(&id)) return fmt::format("i:{}", *i);
  return "s:" + std::get<std::string>(id);
}

json::object Error::to_json() const {
  json::object o{{"code", code}, {"message", message}};
  if (data) o["data"] = *data;
  return o;
}

ProtocolError::ProtocolError(int code, std::string message, std::optional<json::value> data)
    : std::runtime_error(message), error_{code, std::move(message), std::move(data)} {}

namespace {

// Depth is bounded by ParseLimits::max_depth, so recursion is bounded too.
bool has_non_finite_number(const json::value& v) {
  switch (v.kind()) {
    case json::kind::double_:
      return !std::isfinite(v.get_double());
    case json::kind::array:
      for (const auto& item : v.get_array())
        if (has_non_finite_number(item)) return true;
      return false;
    case json::kind::object:
      for (const auto& member : v.get_object())
        if (has_non_finite_number(member.value())) return true;
      return false;
    default:
      return false;
  }
}

}  // namespace

std::variant<json::value, Error> parse_json(std::string_view text, const ParseLimits& limits) {
  if (text.size() > limits.max_bytes) {
    return Error{kParseError,
                 fmt::format("Parse error: message of {} bytes exceeds the limit of {} bytes",
                             text.size(), limits.max_bytes)};
  }
  json::parse_options opts;
  opts.max_depth = limits.max_depth;
  boost::system::error_code ec;
  // A small message's tree in one block that goes with its last part (a tools/call was eight
  // allocations). A large one keeps the default resource: growing blocks would hold about twice
  // the message until it is dropped.
  constexpr std::size_t kMonotonicUpTo = 32 * 1024;
  json::storage_ptr storage;
  if (text.size() <= kMonotonicUpTo)
    storage = json::make_shared_resource<json::monotonic_resource>(text.size() * 2 + 256);
  json::value v = detail::parse_precise(text, ec, std::move(storage), opts);
  if (ec) {
    if (ec == json::error::too_deep) {
      return Error{kParseError,
                   fmt::format("Parse error: nesting deeper than {} levels", limits.max_depth)};
    }
    return Error{kParseError, fmt::format("Parse error: {}", ec.message())};
  }
  // Boost.JSON reads a number beyond double's range (1e999) as infinity, which JSON cannot write
  // back: serializing the message would emit invalid JSON.
  if (has_non_finite_number(v)) {
    return Error{kParseError, "Parse error: a number is out of range (beyond ±1.8e308)"};
  }
  return v;
}

namespace {

// Recovers an id (string or integer) from a member; nullopt for absent, null or other types.
std::optional<Id> read_id(const json::value& v) {
  if (v.is_string()) return Id{std::string(v.get_string())};
  if (v.is_int64()) return Id{v.get_int64()};
  if (v.is_uint64() && v.get_uint64() <= static_cast<std::uint64_t>(INT64_MAX)) {
    return Id{static_cast<std::int64_t>(v.get_uint64())};
  }
  return std::nullopt;
}

Invalid invalid(std::optional<Id> id, std::string message) {
  return Invalid{std::move(id), Error{kInvalidRequest, std::move(message)}};
}

// `v` is only modified (its params moved out) when `movable`, i.e. when the caller owns it.
std::variant<Message, Invalid> read_message(const json::value& v, bool movable) {
  const auto* obj = v.if_object();
  if (!obj) return invalid(std::nullopt, "Invalid Request: a message must be a JSON object");

  std::optional<Id> id;
  const json::value* id_v = obj->if_contains("id");
  if (id_v) id = read_id(*id_v);

  const json::value* ver = obj->if_contains("jsonrpc");
  if (!ver || !ver->is_string() || ver->get_string() != "2.0") {
    return invalid(id, "Invalid Request: \"jsonrpc\" must be \"2.0\"");
  }
  // An error response may carry "id": null (the peer could not read our request's id); it is
  // a response, so it must not be answered.
  const bool null_id_error = id_v && id_v->is_null() && !obj->contains("method") &&
                             !obj->contains("result") && obj->contains("error");
  if (id_v && !id && !null_id_error) {
    return invalid(std::nullopt, "Invalid Request: \"id\" must be a string or an integer");
  }

  const json::value* method = obj->if_contains("method");
  if (method) {
    if (!method->is_string() || method->get_string().empty()) {
      return invalid(id, "Invalid Request: \"method\" must be a non-empty string");
    }
    const json::value* p = obj->if_contains("params");
    if (p && !p->is_object() && !p->is_array()) {
      return invalid(id, "Invalid Request: \"params\" must be an object or an array");
    }
    // Move-constructed, so the params keep their storage: assigning to a value of another
    // storage would copy them.
    json::value params = !p        ? json::value()
                         : movable ? json::value(std::move(const_cast<json::value&>(*p)))
                                   : json::value(*p);
    std::string name(method->get_string());
    if (id) return Message{Request{*id, std::move(name), std::move(params)}};
    return Message{Notification{std::move(name), std::move(params)}};
  }

  const json::value* result = obj->if_contains("result");
  const json::value* error = obj->if_contains("error");
  if (!result && !error) {
    return invalid(id, "Invalid Request: a message needs \"method\", \"result\" or \"error\"");
  }
  if (result && error) {
    return invalid(id, "Invalid Request: a response has either \"result\" or \"error\", not both");
  }
  if (result) {
    if (!id) return invalid(std::nullopt, "Invalid Request: a result needs an \"id\"");
    return Message{Response{id, *result}};
  }
  const auto* eo = error->if_object();
  const json::value* code = eo ? eo->if_contains("code") : nullptr;
  const json::value* msg = eo ? eo->if_contains("message") : nullptr;
  if (!code || !code->is_int64() || !msg || !msg->is_string()) {
    return invalid(id, "Invalid Request: \"error\" needs an integer \"code\" and a \"message\"");
  }
  Error e{static_cast<int>(code->get_int64()), std::string(msg->get_string()), std::nullopt};
  if (const json::value* d = eo->if_contains("data")) e.data = *d;
  return Message{Response{id, std::move(e)}};
}

}  // namespace

std::variant<Message, Invalid> from_json(const json::value& v) {
  return read_message(v, false);
}

std::variant<Message, Invalid> from_json(json::value&& v) {
  return read_message(v, true);
}

json::object to_json(const Request& r) {
  return make_request(r.id, r.method, r.params);
}

json::object to_json(const Notification& n) {
  return make_notification(n.method, n.params);
}

json::object to_json(const Response& r) {
  if (r.is_error()) return make_error(r.id, r.error());
  return make_result(*r.id, r.result());
}

json::object to_json(const Message& m) {
  return std::visit([](const auto& x) { return to_json(x); }, m);
}

json::object make_result(const Id& id, json::value result) {
  json::object o(3, result.storage());
  o.emplace("jsonrpc", "2.0");
  o.emplace("id", to_json(id));
  o.emplace("result", std::move(result));
  return o;
}

json::object make_error(const std::optional<Id>& id, Error error) {
  return json::object{{"jsonrpc", "2.0"},
                      {"id", id ? to_json(*id) : json::value(nullptr)},
                      {"error", error.to_json()}};
}

json::object make_request(const Id& id, std::string_view method, json::value params) {
  json::object o{{"jsonrpc", "2.0"}, {"id", to_json(id)}, {"method", method}};
  if (!params.is_null()) o["params"] = std::move(params);
  return o;
}

const json::object* meta_of(const json::value& params) {
  const auto* p = params.if_object();
  const auto* m = p ? p->if_contains("_meta") : nullptr;
  return m ? m->if_object() : nullptr;
}

json::object make_notification(std::string_view method, json::value params) {
  json::object o{{"jsonrpc", "2.0"}, {"method", method}};
  if (!params.is_null()) o["params"] = std::move(params);
  return o;
}

}  // namespace mcpclass::jsonrpc
