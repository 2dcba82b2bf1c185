// Internal: what the routing proxy reads from and writes into an Anthropic Messages API request
// (POST /v1/messages; docs/route.md, "Endpoints"): the checks of its messages and system, the
// thinking block, Anthropic's error shape. Pure functions over JSON values.
#pragma once

#include "mcpclass/config/route_settings.hpp"
#include "route/chat_request.hpp"

#include <boost/json/object.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace mcpclass::route {

/// The first problem with a routed Messages request: `messages` (objects with role user or
/// assistant, a string content or an array of content blocks of a type the API knows, text
/// blocks with a string `text`) and `system` (absent, a string, or an array of text blocks).
std::optional<FieldError> check_messages_request(const boost::json::object& request);

/// The reasoning decision as Anthropic's thinking block, replacing the client's:
/// {"type":"enabled","budget_tokens": upstream.thinking_budget} or {"type":"disabled"}
/// (upstream.reasoning anthropic; none writes nothing).
void write_thinking(boost::json::object& request, const config::RouteUpstream& upstream,
                    bool use_reasoning);

/// Anthropic's error type for an HTTP status: 400 invalid_request_error, 401
/// authentication_error, 403 permission_error, 404 not_found_error, 413 request_too_large, 429
/// rate_limit_error, 503 and 529 overloaded_error, 504 timeout_error, any other api_error.
std::string_view anthropic_error_type(unsigned status);

/// Anthropic's error body: {"type":"error","error":{"type": anthropic_error_type(status),
/// "message": message}}.
std::string anthropic_error(unsigned status, std::string_view message);

}  // namespace mcpclass::route
