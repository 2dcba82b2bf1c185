#include "server/schema_validator.hpp"

#include <fmt/format.h>
#include <valijson/adapters/boost_json_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validation_results.hpp>
#include <valijson/validator.hpp>

#include <stdexcept>

namespace mcpclass::server {

namespace json = boost::json;

SchemaValidator::SchemaValidator(const json::object& schema)
    : schema_(std::make_unique<valijson::Schema>()) {
  // valijson reads draft 7 keywords; it ignores `$schema` and resolves local `$ref`s, which
  // covers the 2020-12 schemas tools publish in practice (`$defs` + `#/$defs/...`).
  const json::value doc = schema;
  try {
    valijson::SchemaParser parser;
    valijson::adapters::BoostJsonAdapter adapter(doc);
    parser.populateSchema(adapter, *schema_);
  } catch (const std::exception& e) {
    throw std::invalid_argument(fmt::format("invalid JSON Schema: {}", e.what()));
  }
}

SchemaValidator::~SchemaValidator() = default;

namespace {

// valijson contexts look like ["<root>", "[address]", "[city]"]: turn them into "address.city".
std::string field_path(const std::vector<std::string>& context) {
  std::string path;
  for (std::size_t i = 1; i < context.size(); ++i) {
    std::string part = context[i];
    if (part.size() >= 2 && part.front() == '[' && part.back() == ']') {
      part = part.substr(1, part.size() - 2);
      if (!part.empty() && part.front() == '"') part = part.substr(1, part.size() - 2);
    }
    if (!path.empty()) path += '.';
    path += part;
  }
  return path;
}

}  // namespace

std::optional<std::string> SchemaValidator::validate(const json::value& value) const {
  valijson::Validator validator;
  valijson::ValidationResults results;
  valijson::adapters::BoostJsonAdapter target(value);
  if (validator.validate(*schema_, target, &results)) return std::nullopt;
  // The deepest error is the most specific one ("text: expected string"), not the summary
  // that a parent object failed.
  valijson::ValidationResults::Error error, best;
  std::size_t best_depth = 0;
  bool first = true;
  while (results.popError(error)) {
    if (first || error.context.size() > best_depth) {
      best = error;
      best_depth = error.context.size();
      first = false;
    }
  }
  const std::string path = field_path(best.context);
  if (path.empty()) return best.description;
  return fmt::format("{}: {}", path, best.description);
}

}  // namespace mcpclass::server
