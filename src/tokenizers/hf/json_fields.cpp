#include "tokenizers/hf/json_fields.hpp"

#include "mcpclass/classify/errors.hpp"

namespace mcpclass::tokenizers::hf {

const boost::json::object& as_object(const boost::json::value& v, const std::string& what) {
  if (!v.is_object()) throw classify::ClassifyError(what + " is not a JSON object");
  return v.get_object();
}

std::string string_field(const boost::json::object& o, const char* key, const std::string& what) {
  const auto* v = o.if_contains(key);
  if (v == nullptr || !v->is_string())
    throw classify::ClassifyError(what + ": field '" + key + "' must be a string");
  return std::string(v->get_string());
}

std::string string_field_or(const boost::json::object& o, const char* key, std::string fallback) {
  const auto* v = o.if_contains(key);
  if (v == nullptr || v->is_null()) return fallback;
  if (!v->is_string())
    throw classify::ClassifyError(std::string("field '") + key + "' must be a string");
  return std::string(v->get_string());
}

bool bool_field_or(const boost::json::object& o, const char* key, bool fallback) {
  const auto* v = o.if_contains(key);
  if (v == nullptr || v->is_null()) return fallback;
  if (!v->is_bool())
    throw classify::ClassifyError(std::string("field '") + key + "' must be a boolean");
  return v->get_bool();
}

std::int64_t integer_or_minus_one(const boost::json::value& v) {
  if (v.is_int64()) return v.get_int64();
  if (v.is_uint64() && v.get_uint64() <= static_cast<std::uint64_t>(INT64_MAX))
    return static_cast<std::int64_t>(v.get_uint64());
  return -1;
}

std::int64_t int_field_or(const boost::json::object& o, const char* key, std::int64_t fallback) {
  const auto* v = o.if_contains(key);
  if (v == nullptr || v->is_null()) return fallback;
  if (const std::int64_t n = integer_or_minus_one(*v); n >= 0) return n;
  if (v->is_int64()) return v->get_int64();
  throw classify::ClassifyError(std::string("field '") + key + "' must be an integer");
}

const boost::json::array& array_field(const boost::json::object& o, const char* key,
                                      const std::string& what) {
  const auto* v = o.if_contains(key);
  if (v == nullptr || !v->is_array())
    throw classify::ClassifyError(what + ": field '" + key + "' must be an array");
  return v->get_array();
}

std::pair<std::string, bool> pattern_field(const boost::json::object& o, const std::string& what) {
  const auto* v = o.if_contains("pattern");
  if (v == nullptr || !v->is_object())
    throw classify::ClassifyError(what + ": field 'pattern' must be an object");
  const auto& p = v->get_object();
  if (p.contains("Regex")) return {string_field(p, "Regex", what), true};
  return {string_field(p, "String", what), false};
}

}  // namespace mcpclass::tokenizers::hf
