// Internal: what the routing proxy reads from and writes into an OpenAI Responses API request
// (POST /v1/responses; docs/route.md, "Endpoints"): the checks of its input and instructions,
// and reasoning.effort. Pure functions over JSON values.
#pragma once

#include "mcpclass/config/route_settings.hpp"
#include "route/chat_request.hpp"

#include <boost/json/object.hpp>

#include <optional>

namespace mcpclass::route {

/// The first problem with a routed Responses request: `input` a string or an array of items;
/// a message item (with a `role`, or "type": "message") has role user, assistant, system or
/// developer and a content that is a string or an array of content parts of a type the API knows
/// (input_text and output_text with a string `text`); any other item has a string `type` (tool
/// calls, their outputs and reasoning pass through unread); `instructions` absent, null or a
/// string.
std::optional<FieldError> check_responses_request(const boost::json::object& request);

/// The reasoning decision as "reasoning": {"effort": ...} (upstream.reasoning openai; the other
/// members of the client's `reasoning` kept); other families write nothing on this API.
void write_reasoning_effort(boost::json::object& request, const config::RouteUpstream& upstream,
                            bool use_reasoning);

}  // namespace mcpclass::route
