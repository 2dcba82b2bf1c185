#include "route/request_api.hpp"

#include "route/messages_request.hpp"
#include "route/responses_request.hpp"

#include <boost/json.hpp>

namespace mcpclass::route {

namespace json = boost::json;

namespace {

// Anthropic's `system` and the Responses `instructions`: one top-level member.
bool apply_member_prompt(json::object& request, std::string_view key, const std::string& prompt,
                         config::SystemPromptMode mode) {
  auto* current = request.if_contains(key);
  const bool empty = current == nullptr || current->is_null() ||
                     (current->is_string() && current->get_string().empty()) ||
                     (current->is_array() && current->get_array().empty());
  if (!empty && mode != config::SystemPromptMode::replace) return false;
  if (current && current->is_string() && current->get_string() == prompt) return false;
  request[key] = prompt;
  return true;
}

}  // namespace

std::optional<RequestApi> api_at(std::string_view path) {
  for (auto api : {RequestApi::chat_completions, RequestApi::messages, RequestApi::responses})
    if (path == path_of(api)) return api;
  return std::nullopt;
}

std::string_view path_of(RequestApi api) {
  switch (api) {
    case RequestApi::messages:
      return "/v1/messages";
    case RequestApi::responses:
      return "/v1/responses";
    case RequestApi::chat_completions:
      break;
  }
  return "/v1/chat/completions";
}

config::ApiFormat upstream_format(RequestApi api) {
  return api == RequestApi::messages ? config::ApiFormat::anthropic : config::ApiFormat::openai;
}

std::string_view upstream_path(RequestApi api) {
  // "/v1" + "/chat/completions": the base URL names the API root.
  return path_of(api).substr(std::string_view("/v1").size());
}

std::optional<std::string> missing_input(const json::object& request, RequestApi api) {
  if (api == RequestApi::responses) {
    const auto* input = request.if_contains("input");
    if (input == nullptr || !(input->is_string() || input->is_array()))
      return "'input' is required and must be a string or an array of items";
    return std::nullopt;
  }
  const auto* messages = request.if_contains("messages");
  if (messages == nullptr || !messages->is_array())
    return "'messages' is required and must be an array";
  return std::nullopt;
}

std::optional<FieldError> check_request(const json::object& request, RequestApi api) {
  switch (api) {
    case RequestApi::messages:
      return check_messages_request(request);
    case RequestApi::responses:
      return check_responses_request(request);
    case RequestApi::chat_completions:
      break;
  }
  return check_messages(request.at("messages").get_array());
}

bool apply_system_prompt(json::object& request, RequestApi api, const std::string& prompt,
                         config::SystemPromptMode mode) {
  if (prompt.empty() || mode == config::SystemPromptMode::none) return false;
  switch (api) {
    case RequestApi::messages:
      return apply_member_prompt(request, "system", prompt, mode);
    case RequestApi::responses:
      return apply_member_prompt(request, "instructions", prompt, mode);
    case RequestApi::chat_completions:
      break;
  }
  return apply_system_prompt(request, prompt, mode);
}

void write_reasoning(json::object& request, RequestApi api, const config::RouteUpstream& upstream,
                     bool use_reasoning) {
  switch (api) {
    case RequestApi::messages:
      return write_thinking(request, upstream, use_reasoning);
    case RequestApi::responses:
      return write_reasoning_effort(request, upstream, use_reasoning);
    case RequestApi::chat_completions:
      return write_reasoning(request, upstream, use_reasoning);
  }
}

std::string api_error(RequestApi api, unsigned status, std::string_view message,
                      std::string_view type, std::string_view code, std::string_view param) {
  if (api == RequestApi::messages) return anthropic_error(status, message);
  return openai_error(message, type, code, param);
}

HeaderList upstream_headers(config::ApiFormat format, const std::string& api_key,
                            const std::function<std::string_view(std::string_view)>& client) {
  HeaderList out;
  if (format == config::ApiFormat::openai) {
    if (!api_key.empty()) out.emplace_back("Authorization", "Bearer " + api_key);
    return out;
  }
  if (!api_key.empty()) out.emplace_back("x-api-key", api_key);
  const auto version = client("anthropic-version");
  out.emplace_back("anthropic-version", version.empty() ? "2023-06-01" : std::string(version));
  if (const auto beta = client("anthropic-beta"); !beta.empty())
    out.emplace_back("anthropic-beta", std::string(beta));
  return out;
}

}  // namespace mcpclass::route
