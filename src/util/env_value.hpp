// Internal: an environment variable's value, "" when it is unset.
// Thread-safety: reads the environment; safe while nothing in the process sets it.
#pragma once

#include <cstdlib>
#include <string>

namespace mcpclass::util {

inline std::string env_value(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? std::string() : std::string(v);
}

}  // namespace mcpclass::util
