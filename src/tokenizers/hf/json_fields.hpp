// Reading the fields of tokenizer.json blocks: a missing or mistyped field is a ClassifyError
// naming the block type and the field, never an exception from the JSON library.
#pragma once

#include <boost/json.hpp>

#include <string>
#include <utility>

namespace mcpclass::tokenizers::hf {

const boost::json::object& as_object(const boost::json::value& v, const std::string& what);
std::string string_field(const boost::json::object& o, const char* key, const std::string& what);
std::string string_field_or(const boost::json::object& o, const char* key, std::string fallback);
bool bool_field_or(const boost::json::object& o, const char* key, bool fallback);
/// The integer `v` holds (int64 or uint64 up to INT64_MAX), or -1 when it holds none.
std::int64_t integer_or_minus_one(const boost::json::value& v);
std::int64_t int_field_or(const boost::json::object& o, const char* key, std::int64_t fallback);
const boost::json::array& array_field(const boost::json::object& o, const char* key,
                                      const std::string& what);
/// The "pattern" of Replace and Split: {"String": s} or {"Regex": r}; second is true for a regex.
std::pair<std::string, bool> pattern_field(const boost::json::object& o, const std::string& what);

}  // namespace mcpclass::tokenizers::hf
