// Internal: configuration text (YAML or JSON) → one boost::json::value, so both formats share a
// single validation path.
#pragma once

#include <boost/json.hpp>

#include <string_view>

namespace mcpclass::config::detail {

namespace json = boost::json;

/// Plain YAML scalars resolve like the YAML 1.2 core schema (null, true/false, integers, floats);
/// quoted scalars stay strings. Throws ConfigError with line and column on syntax errors.
json::value yaml_to_json(std::string_view text);
/// Throws ConfigError with line and column on syntax errors.
json::value parse_json(std::string_view text);

}  // namespace mcpclass::config::detail
