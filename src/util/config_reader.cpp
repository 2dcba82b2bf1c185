#include "util/config_reader.hpp"

#include <cmath>
#include <limits>

namespace mcpclass::util::strict {

void fail(const std::string& path, const std::string& message) {
  throw ConfigError(path, message);
}

std::string member_path(std::string_view parent, std::string_view key) {
  if (parent.empty()) return std::string(key);
  std::string out(parent);
  out += '.';
  out += key;
  return out;
}

std::string index_path(std::string_view parent, std::size_t index) {
  return std::string(parent) + "[" + std::to_string(index) + "]";
}

std::string_view type_name(const json::value& v) {
  switch (v.kind()) {
    case json::kind::null:
      return "null";
    case json::kind::bool_:
      return "boolean";
    case json::kind::int64:
    case json::kind::uint64:
    case json::kind::double_:
      return "number";
    case json::kind::string:
      return "string";
    case json::kind::array:
      return "array";
    case json::kind::object:
      return "object";
  }
  return "value";
}

namespace {
[[noreturn]] void wrong_type(const json::value& v, const std::string& path, std::string_view want) {
  fail(path, "expected " + std::string(want) + ", got " + std::string(type_name(v)));
}
}  // namespace

std::string as_string(const json::value& v, const std::string& path) {
  if (!v.is_string()) wrong_type(v, path, "string");
  return std::string(v.get_string());
}

bool as_bool(const json::value& v, const std::string& path) {
  if (!v.is_bool()) wrong_type(v, path, "boolean");
  return v.get_bool();
}

double as_number(const json::value& v, const std::string& path) {
  if (!v.is_number()) wrong_type(v, path, "number");
  const double d = v.to_number<double>();
  if (!std::isfinite(d)) fail(path, "expected a finite number");
  return d;
}

std::int64_t as_integer(const json::value& v, const std::string& path) {
  if (v.is_int64()) return v.get_int64();
  if (v.is_uint64()) {
    if (v.get_uint64() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
      fail(path, "integer out of range");
    return static_cast<std::int64_t>(v.get_uint64());
  }
  if (v.is_double()) {
    const double d = v.get_double();
    // YAML/JSON writers sometimes emit 8080.0; accept integral doubles.
    if (std::isfinite(d) && d == std::trunc(d) && std::abs(d) < 9.0e15)
      return static_cast<std::int64_t>(d);
  }
  wrong_type(v, path, "integer");
}

const json::object& as_object(const json::value& v, const std::string& path) {
  if (!v.is_object()) wrong_type(v, path, "object");
  return v.get_object();
}

const json::array& as_array(const json::value& v, const std::string& path) {
  if (!v.is_array()) wrong_type(v, path, "array");
  return v.get_array();
}

std::vector<std::string> as_string_list(const json::value& v, const std::string& path) {
  const auto& arr = as_array(v, path);
  std::vector<std::string> out;
  out.reserve(arr.size());
  for (std::size_t i = 0; i < arr.size(); ++i) {
    // The element's path only for the error (keyword lists have hundreds of elements).
    if (!arr[i].is_string()) wrong_type(arr[i], index_path(path, i), "string");
    out.emplace_back(arr[i].get_string());
  }
  return out;
}

ObjectReader::ObjectReader(const json::value& v, std::string path)
    : obj_(as_object(v, path)), path_(std::move(path)) {}

const json::value* ObjectReader::get(std::string_view key) {
  used_.emplace(key);
  const auto* v = obj_.if_contains(key);
  if (v == nullptr || v->is_null()) return nullptr;
  return v;
}

const json::value& ObjectReader::required(std::string_view key) {
  const auto* v = get(key);
  if (v == nullptr) fail(path_of(key), "required key is missing");
  return *v;
}

std::optional<std::string> ObjectReader::string(std::string_view key) {
  const auto* v = get(key);
  if (v == nullptr) return std::nullopt;
  return as_string(*v, path_of(key));
}

std::optional<bool> ObjectReader::boolean(std::string_view key) {
  const auto* v = get(key);
  if (v == nullptr) return std::nullopt;
  return as_bool(*v, path_of(key));
}

std::optional<double> ObjectReader::number(std::string_view key) {
  const auto* v = get(key);
  if (v == nullptr) return std::nullopt;
  return as_number(*v, path_of(key));
}

std::optional<std::int64_t> ObjectReader::integer(std::string_view key) {
  const auto* v = get(key);
  if (v == nullptr) return std::nullopt;
  return as_integer(*v, path_of(key));
}

std::optional<std::vector<std::string>> ObjectReader::string_list(std::string_view key) {
  const auto* v = get(key);
  if (v == nullptr) return std::nullopt;
  return as_string_list(*v, path_of(key));
}

std::optional<std::size_t> ObjectReader::count(std::string_view key, std::int64_t min,
                                               std::int64_t max) {
  const auto n = integer(key);
  if (!n) return std::nullopt;
  if (*n < min || *n > max)
    fail(path_of(key),
         max == std::numeric_limits<std::int64_t>::max()
             ? "must be an integer >= " + std::to_string(min)
             : "must be within [" + std::to_string(min) + ", " + std::to_string(max) + "]");
  return static_cast<std::size_t>(*n);
}

std::optional<std::chrono::milliseconds> ObjectReader::seconds(std::string_view key,
                                                               bool allow_zero) {
  const auto v = number(key);
  if (!v) return std::nullopt;
  if (*v < 0 || (*v == 0 && !allow_zero) || *v > 86'400)
    fail(path_of(key),
         allow_zero ? "must be within [0, 86400] seconds" : "must be within (0, 86400] seconds");
  return std::chrono::milliseconds(static_cast<long long>(std::llround(*v * 1000)));
}

void ObjectReader::finish() const {
  for (const auto& member : obj_) {
    if (!used_.contains(std::string_view(member.key()))) fail(path_of(member.key()), "unknown key");
  }
}

}  // namespace mcpclass::util::strict
