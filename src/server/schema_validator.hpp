// JSON Schema validation of tool arguments with valijson, compiled once per tool. The usual tool
// schema, an object of typed scalar properties, is also checked directly: valijson builds an
// error context (a vector of strings per property) even for a valid value, about twenty
// allocations per call, so it runs only when the direct check cannot say "valid".
#pragma once

#include <boost/json.hpp>

#include <memory>
#include <optional>
#include <string>
#include <vector>

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
  /// The schema when it is `{"type":"object"}` with `properties` whose schemas only name a
  /// scalar `type` (plus annotations), `required` and a boolean `additionalProperties`.
  struct FlatSchema {
    enum class Type { string, boolean, integer, number };
    std::vector<std::pair<std::string, Type>> properties;
    std::vector<std::string> required;
    bool additional = true;
    /// True only when valijson would accept `value` too; false means "ask valijson".
    bool surely_valid(const boost::json::value& value) const;
  };
  static std::optional<FlatSchema> flat(const boost::json::object& schema);

  std::unique_ptr<valijson::Schema> schema_;
  std::optional<FlatSchema> flat_;
};

}  // namespace mcpclass::server
