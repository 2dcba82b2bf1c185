#include "util/env_reference.hpp"

#include "mcpclass/util/config_error.hpp"

#include <cstdlib>

namespace mcpclass::util {

std::string resolve_env_reference(const std::string& value, const std::string& key) {
  if (!value.starts_with("${") || !value.ends_with("}")) return value;
  const std::string name = value.substr(2, value.size() - 3);
  const char* env = std::getenv(name.c_str());
  if (env == nullptr || *env == '\0')
    throw ConfigError(key, "environment variable " + name + " is unset or empty");
  return env;
}

}  // namespace mcpclass::util
