// Internal: what differs between the APIs the routing proxy serves (docs/route.md, "Endpoints"):
// each one's path, the upstream api_format it goes to, the checks of its body, where its system
// prompt and reasoning are written, its error shape and the headers its upstreams authenticate
// with. The API-specific parts live in chat_request, messages_request and responses_request.
// Pure functions.
#pragma once

#include "mcpclass/config/route_settings.hpp"
#include "mcpclass/route/router.hpp"
#include "route/chat_request.hpp"

#include <boost/json/object.hpp>

#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace mcpclass::route {

/// The API served at `path` ("/v1/chat/completions", "/v1/messages", "/v1/responses"), or none.
std::optional<RequestApi> api_at(std::string_view path);
/// The path `api` is served at.
std::string_view path_of(RequestApi api);
/// The api_format of the upstreams a request of `api` may go to.
config::ApiFormat upstream_format(RequestApi api);
/// What an upstream of `format` is POSTed a request of `api` at, after its base_url.
std::string_view upstream_path(RequestApi api);

/// The first problem with the list a request of `api` is read from, checked before its model:
/// chat and messages need a `messages` array, responses an `input` string or array.
std::optional<std::string> missing_input(const boost::json::object& request, RequestApi api);
/// The first problem with a routed request's messages (and Anthropic's `system`, the Responses
/// `instructions` and `reasoning`).
std::optional<FieldError> check_request(const boost::json::object& request, RequestApi api);

/// Puts `prompt` (if not empty) where `api` keeps the system prompt, as `mode` says: a chat
/// system message, Anthropic's `system`, the Responses `instructions` (insert: when absent or
/// empty; replace: also over what the client sent). Returns whether the request changed.
[[nodiscard]] bool apply_system_prompt(boost::json::object& request, RequestApi api,
                                       const std::string& prompt, config::SystemPromptMode mode);

/// Writes the reasoning decision for `upstream` in `api`'s fields, replacing the client's.
void write_reasoning(boost::json::object& request, RequestApi api,
                     const config::RouteUpstream& upstream, bool use_reasoning);

/// An error body in `api`'s shape: OpenAI's {"error": {message, type, param, code}} (type, code
/// and param as given), or Anthropic's {"type": "error", "error": {type (from `status`),
/// message}}.
std::string api_error(RequestApi api, unsigned status, std::string_view message,
                      std::string_view type, std::string_view code, std::string_view param = {});

/// The headers a request to an upstream of `format` authenticates and versions itself with:
/// openai "Authorization: Bearer <key>"; anthropic "x-api-key: <key>" and "anthropic-version"
/// (the client's, else 2023-06-01), with the client's "anthropic-beta". No key: no key header.
/// `client(name)` is the client's header, "" when absent.
HeaderList upstream_headers(config::ApiFormat format, const std::string& api_key,
                            const std::function<std::string_view(std::string_view)>& client);

}  // namespace mcpclass::route
