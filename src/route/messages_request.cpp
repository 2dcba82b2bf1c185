#include "route/messages_request.hpp"

#include <fmt/format.h>
#include <boost/json.hpp>

namespace mcpclass::route {

namespace json = boost::json;

namespace {

// The content block types of Anthropic's Messages API; only text blocks are classified, the
// others pass through as they came.
constexpr std::string_view kBlockTypes[] = {"text",
                                            "image",
                                            "document",
                                            "search_result",
                                            "tool_use",
                                            "tool_result",
                                            "thinking",
                                            "redacted_thinking",
                                            "server_tool_use",
                                            "web_search_tool_result",
                                            "web_fetch_tool_result",
                                            "code_execution_tool_result",
                                            "bash_code_execution_tool_result",
                                            "text_editor_code_execution_tool_result",
                                            "mcp_tool_use",
                                            "mcp_tool_result",
                                            "container_upload"};
constexpr std::string_view kTextTypes[] = {"text"};
constexpr std::string_view kRoles[] = {"user", "assistant"};
const MessageRules kRules{.roles = kRoles,
                          .part_types = kBlockTypes,
                          .text_types = kTextTypes,
                          .assistant_may_omit_content = false};
const MessageRules kSystemRules{.roles = {}, .part_types = kTextTypes, .text_types = kTextTypes};

}  // namespace

std::optional<FieldError> check_messages_request(const json::object& request) {
  const auto& messages = request.at("messages").get_array();
  for (std::size_t i = 0; i < messages.size(); ++i)
    if (auto e = check_message(messages[i], fmt::format("messages[{}]", i), kRules)) return e;
  const auto* system = request.if_contains("system");
  if (system == nullptr) return {};
  return check_content(*system, "system", kSystemRules);
}

void write_thinking(json::object& request, const config::RouteUpstream& upstream,
                    bool use_reasoning) {
  if (upstream.reasoning != config::ReasoningStyle::anthropic) return;
  request["thinking"] =
      use_reasoning ? json::object{{"type", "enabled"}, {"budget_tokens", upstream.thinking_budget}}
                    : json::object{{"type", "disabled"}};
}

std::string_view anthropic_error_type(unsigned status) {
  switch (status) {
    case 400:
      return "invalid_request_error";
    case 401:
      return "authentication_error";
    case 403:
      return "permission_error";
    case 404:
      return "not_found_error";
    case 413:
      return "request_too_large";
    case 429:
      return "rate_limit_error";
    case 503:
    case 529:
      return "overloaded_error";
    case 504:
      return "timeout_error";
    default:
      return "api_error";
  }
}

std::string anthropic_error(unsigned status, std::string_view message) {
  return json::serialize(json::object{
      {"type", "error"},
      {"error", json::object{{"type", anthropic_error_type(status)}, {"message", message}}}});
}

}  // namespace mcpclass::route
