// Lenient reads of optional JSON members, for answers from peers where an absent or mistyped
// member means "not given". (Configuration documents are read strictly instead:
// util/config_reader.hpp names the bad key.) Thread-safety: pure functions.
#pragma once

#include <boost/json.hpp>

#include <string>
#include <string_view>

namespace mcpclass::util {

/// The member `key` of `o` when it is a string, else "".
inline std::string string_or_empty(const boost::json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  return v != nullptr && v->is_string() ? std::string(v->get_string()) : std::string();
}

}  // namespace mcpclass::util
