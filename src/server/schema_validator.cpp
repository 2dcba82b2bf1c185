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
    : schema_(std::make_unique<valijson::Schema>()), flat_(flat(schema)) {
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

bool annotation(std::string_view key) {
  return key == "description" || key == "title" || key == "default" || key == "examples" ||
         key == "$comment";
}

}  // namespace

std::optional<SchemaValidator::FlatSchema> SchemaValidator::flat(const json::object& schema) {
  using Type = FlatSchema::Type;
  FlatSchema out;
  const auto* type = schema.if_contains("type");
  if (!type || !type->is_string() || type->get_string() != "object") return std::nullopt;
  for (const auto& [key, value] : schema) {
    if (key == "type" || key == "$schema" || annotation(key)) continue;
    if (key == "additionalProperties" && value.is_bool()) {
      out.additional = value.get_bool();
    } else if (key == "required" && value.is_array()) {
      for (const auto& name : value.get_array()) {
        if (!name.is_string()) return std::nullopt;
        out.required.emplace_back(name.get_string());
      }
    } else if (key == "properties" && value.is_object()) {
      for (const auto& [name, property] : value.get_object()) {
        const auto* p = property.if_object();
        const auto* t = p ? p->if_contains("type") : nullptr;
        if (!t || !t->is_string()) return std::nullopt;
        for (const auto& [pkey, pvalue] : *p)
          if (pkey != "type" && !annotation(pkey)) return std::nullopt;
        const std::string_view ts = t->get_string();
        Type kind;
        if (ts == "string") {
          kind = Type::string;
        } else if (ts == "boolean") {
          kind = Type::boolean;
        } else if (ts == "integer") {
          kind = Type::integer;
        } else if (ts == "number") {
          kind = Type::number;
        } else {
          return std::nullopt;
        }
        out.properties.emplace_back(std::string(name), kind);
      }
    } else {
      return std::nullopt;
    }
  }
  return out;
}

bool SchemaValidator::FlatSchema::surely_valid(const json::value& value) const {
  const auto* o = value.if_object();
  if (!o) return false;
  for (const auto& name : required)
    if (!o->contains(name)) return false;
  std::size_t known = 0;
  for (const auto& [name, type] : properties) {
    const auto* v = o->if_contains(name);
    if (!v) continue;
    ++known;
    const bool ok = type == Type::string    ? v->is_string()
                    : type == Type::boolean ? v->is_bool()
                    : type == Type::integer ? v->is_int64() || v->is_uint64()
                                            : v->is_number();
    if (!ok) return false;
  }
  return additional || known == o->size();
}

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
  if (flat_ && flat_->surely_valid(value)) return std::nullopt;
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
