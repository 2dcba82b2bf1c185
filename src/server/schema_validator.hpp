// JSON Schema validation of tool arguments with valijson, compiled once per tool.
#pragma once

#include <boost/json.hpp>

#include <memory>
#include <optional>
#include <string>

namespace valijson {
class Schema;
}

namespace mcpclass::server {

/// A compiled schema. Thread-safety: validate() is const and may run concurrently.
class SchemaValidator {
 public:
  /// Throws std::invalid_argument naming the problem when the schema cannot be compiled.
  explicit SchemaValidator(const boost::json::object& schema);
  ~SchemaValidator();

  /// nullopt when `value` conforms; otherwise a message naming the offending field.
  std::optional<std::string> validate(const boost::json::value& value) const;

 private:
  std::unique_ptr<valijson::Schema> schema_;
};

}  // namespace mcpclass::server
