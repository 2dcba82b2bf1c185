#include "route/responses_request.hpp"

#include <fmt/format.h>
#include <boost/json.hpp>

namespace mcpclass::route {

namespace json = boost::json;

namespace {

constexpr std::string_view kPartTypes[] = {"input_text",   "input_image",   "input_file",
                                           "input_audio",  "output_text",   "refusal",
                                           "summary_text", "reasoning_text"};
constexpr std::string_view kTextTypes[] = {"input_text", "output_text"};
constexpr std::string_view kRoles[] = {"user", "assistant", "system", "developer"};
const MessageRules kRules{.roles = kRoles,
                          .part_types = kPartTypes,
                          .text_types = kTextTypes,
                          .assistant_may_omit_content = false};

std::optional<FieldError> check_item(const json::value& item, const std::string& path) {
  const auto* o = item.if_object();
  if (o == nullptr) return wrong_kind(path, "an object (an input item)", item);
  const auto* type = o->if_contains("type");
  if (type != nullptr && !type->is_string()) return wrong_kind(path + ".type", "a string", *type);
  const bool message = o->contains("role") || (type && type->get_string() == "message");
  if (message) return check_message(item, path, kRules);
  if (type == nullptr) return field_error(path + ".type", "is required (an item without a role)");
  return {};
}

}  // namespace

std::optional<FieldError> check_responses_request(const json::object& request) {
  if (const auto* items = request.at("input").if_array())
    for (std::size_t i = 0; i < items->size(); ++i)
      if (auto e = check_item((*items)[i], fmt::format("input[{}]", i))) return e;
  const auto* instructions = request.if_contains("instructions");
  if (instructions && !instructions->is_string() && !instructions->is_null())
    return wrong_kind("instructions", "a string", *instructions);
  const auto* reasoning = request.if_contains("reasoning");
  if (reasoning && !reasoning->is_object() && !reasoning->is_null())
    return wrong_kind("reasoning", "an object", *reasoning);
  return {};
}

void write_reasoning_effort(json::object& request, const config::RouteUpstream& upstream,
                            bool use_reasoning) {
  if (upstream.reasoning != config::ReasoningStyle::openai) return;
  auto& reasoning = request["reasoning"];
  if (!reasoning.is_object()) reasoning = json::object();
  reasoning.get_object()["effort"] =
      use_reasoning ? upstream.reasoning_effort : upstream.reasoning_effort_off;
}

}  // namespace mcpclass::route
