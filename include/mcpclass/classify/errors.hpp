// Exception types of the classification layer.
#pragma once

#include "mcpclass/util/config_error.hpp"

#include <stdexcept>
#include <string>

namespace mcpclass::classify {

/// Base of every error thrown by the classification layer.
class ClassifyError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The configuration error of every layer (mcpclass/util/config_error.hpp). Not a ClassifyError:
/// the layers below classify (the HTTP transport) throw it too.
using ConfigError = util::ConfigError;

/// A classification violates the contract (index range, distribution, confidence).
class InvalidClassification : public ClassifyError {
 public:
  using ClassifyError::ClassifyError;
};

}  // namespace mcpclass::classify
