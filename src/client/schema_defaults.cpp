// SEP-1034: elicitation answers carry the schema's defaults for fields the user left out.
#include "mcpclass/client/client.hpp"

namespace mcpclass::client {

json::object apply_schema_defaults(json::object content, const json::object& schema) {
  const auto* properties = schema.if_contains("properties");
  if (properties == nullptr || !properties->is_object()) return content;
  for (const auto& [name, property] : properties->get_object()) {
    if (content.contains(name) || !property.is_object()) continue;
    if (const auto* def = property.get_object().if_contains("default")) content[name] = *def;
  }
  return content;
}

}  // namespace mcpclass::client
