// The error every layer throws for a bad configuration value, so each layer can read its own
// section of the document (util/config_reader.hpp) and the callers catch one type.
// Thread-safety: an immutable value.
#pragma once

#include <stdexcept>
#include <string>
#include <utility>

namespace mcpclass::util {

/// A configuration value is missing, has the wrong type or is out of range. `path()` names the
/// offending key the way a user wrote it (`classifier.rules.math.keywords[2]`); `what()` is
/// "<path>: <message>".
class ConfigError : public std::runtime_error {
 public:
  /// An error about the document as a whole (syntax, I/O, command-line value): no key path.
  explicit ConfigError(const std::string& message) : ConfigError(std::string(), message) {}
  ConfigError(std::string path, const std::string& message)
      : std::runtime_error(path.empty() ? message : path + ": " + message),
        path_(std::move(path)),
        message_(message) {}
  const std::string& path() const noexcept { return path_; }
  /// The message without the path.
  const std::string& message() const noexcept { return message_; }

 private:
  std::string path_;
  std::string message_;
};

}  // namespace mcpclass::util
