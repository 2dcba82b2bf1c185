// Exception types of the classification layer.
#pragma once

#include <stdexcept>
#include <string>
#include <utility>

namespace mcpclass::classify {

/// Base of every error thrown by the classification layer.
class ClassifyError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A configuration value is missing, has the wrong type or is out of range. `path()` names the
/// offending key the way a user wrote it (`classifier.rules.math.keywords[2]`); `what()` is
/// "<path>: <message>".
class ConfigError : public ClassifyError {
 public:
  /// An error about the document as a whole (syntax, I/O, command-line value): no key path.
  explicit ConfigError(const std::string& message) : ConfigError(std::string(), message) {}
  ConfigError(std::string path, const std::string& message)
      : ClassifyError(path.empty() ? message : path + ": " + message),
        path_(std::move(path)),
        message_(message) {}
  const std::string& path() const noexcept { return path_; }
  /// The message without the path.
  const std::string& message() const noexcept { return message_; }

 private:
  std::string path_;
  std::string message_;
};

/// A classification violates the contract (index range, distribution, confidence).
class InvalidClassification : public ClassifyError {
 public:
  using ClassifyError::ClassifyError;
};

}  // namespace mcpclass::classify
