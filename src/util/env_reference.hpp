// Internal: secrets named in a configuration document ("${NAME}") instead of written in it.
// Thread-safety: reads the environment; safe while nothing calls setenv().
#pragma once

#include <string>

namespace mcpclass::util {

/// `value`, or when it is "${NAME}" the environment variable NAME (secrets stay out of config
/// files). Throws ConfigError naming `key` when the variable is unset or empty.
std::string resolve_env_reference(const std::string& value, const std::string& key);

}  // namespace mcpclass::util
