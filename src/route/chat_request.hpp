// Internal: what the routing proxy reads from and writes into an OpenAI chat completion request
// (docs/route.md, "The decision"). Pure functions over JSON values.
#pragma once

#include "mcpclass/config/route_settings.hpp"

#include <boost/json/object.hpp>

#include <string>
#include <string_view>

namespace mcpclass::route {

/// The text the classifier sees: the last user message, or every user message joined by "\n".
/// Array contents contribute their {"type":"text"} parts. No user message: "".
std::string prompt_text(const boost::json::object& request, config::RouteText mode);

/// Writes the reasoning decision the way `upstream`'s family reads it, replacing the client's.
void write_reasoning(boost::json::object& request, const config::RouteUpstream& upstream,
                     bool use_reasoning);

/// Puts `prompt` (if not empty) in a system message as `mode` says.
void apply_system_prompt(boost::json::object& request, const std::string& prompt,
                         config::SystemPromptMode mode);

/// OpenAI's error body: {"error": {"message", "type", "param": null, "code"}}.
std::string openai_error(std::string_view message, std::string_view type, std::string_view code);

/// `text` cut to at most `max_bytes`, never inside a UTF-8 sequence.
std::string_view utf8_prefix(std::string_view text, std::size_t max_bytes);

}  // namespace mcpclass::route
