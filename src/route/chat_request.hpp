// Internal: what the routing proxy reads from and writes into an OpenAI chat completion request
// (docs/route.md, "The decision"), and the message walk and checks the other APIs' requests
// share (route/messages_request.hpp, route/responses_request.hpp). Pure functions over JSON values.
#pragma once

#include "mcpclass/config/route_settings.hpp"
#include "mcpclass/route/router.hpp"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include <cstddef>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace mcpclass::route {

/// The text the classifier sees: the last user message, or every user message joined by "\n",
/// of `api`'s message list (chat and messages: "messages"; responses: "input", a string being
/// one user message). Array contents contribute their text parts ({"type":"text"}; responses:
/// "input_text" and "output_text"), joined by "\n". No user message: "".
std::string prompt_text(const boost::json::object& request, config::RouteText mode,
                        RequestApi api = RequestApi::chat_completions);

/// Writes the reasoning decision the way `upstream`'s family reads it, replacing the client's.
void write_reasoning(boost::json::object& request, const config::RouteUpstream& upstream,
                     bool use_reasoning);

/// Every text of `request` a guard reads, whole: the string content or each text part (as
/// prompt_text() reads them) of every user, system and developer message, Anthropic's `system`
/// and the Responses `instructions`. Views into `request`.
std::vector<std::string_view> guarded_texts(const boost::json::object& request,
                                            RequestApi api = RequestApi::chat_completions);

/// Rewrites each text guarded_texts() reads with `rewrite`. Returns how many texts it changed.
std::size_t rewrite_guarded_text(boost::json::object& request,
                                 const std::function<std::string(std::string_view)>& rewrite,
                                 RequestApi api = RequestApi::chat_completions);

/// `text` in pieces of at most `size` bytes, never cut inside a UTF-8 sequence, each repeating
/// the last min(size / 4, 1024) bytes of the one before (a phrase the cut splits is whole in
/// one of them); `text` itself when it fits (or `size` is 0).
std::vector<std::string_view> text_pieces(std::string_view text, std::size_t size);

/// Puts `prompt` (if not empty) in a system message as `mode` says. Returns whether the request
/// changed (a system message inserted, or one whose content was not already `prompt` replaced).
[[nodiscard]] bool apply_system_prompt(boost::json::object& request, const std::string& prompt,
                                       config::SystemPromptMode mode);

/// A request field OpenAI's API would refuse: `param` names it the way OpenAI does
/// ("messages[1].content"), `message` says what is wrong (and names `param` too).
struct FieldError {
  std::string param;
  std::string message;
};

/// `param`'s problem: "Invalid '<param>': <problem>".
FieldError field_error(std::string param, std::string_view problem);
/// "Invalid '<param>': must be <expected>, got <got's JSON type>".
FieldError wrong_kind(std::string param, std::string_view expected, const boost::json::value& got);

/// What one API accepts in a message (an empty list: anything).
struct MessageRules {
  std::span<const std::string_view> roles;
  std::span<const std::string_view> part_types;  ///< content part (block) types
  std::span<const std::string_view> text_types;  ///< the part types that carry a string `text`
  bool assistant_may_omit_content = false;       ///< chat: tool calls carry the answer
};

/// The first problem with one message at `path` ("messages[2]") under `rules`: an object with a
/// string `role` (one of rules.roles), a `content` that is a string or an array of content parts
/// (objects with a string `type` of rules.part_types; text types with a string `text`).
std::optional<FieldError> check_message(const boost::json::value& message, const std::string& path,
                                        const MessageRules& rules);

/// The first problem with a message's `content` at `path` under `rules`: a string, or an array of
/// content parts as check_message() says.
std::optional<FieldError> check_content(const boost::json::value& content, const std::string& path,
                                        const MessageRules& rules);

/// The first problem with the messages a routed request is classified from and forwarded with:
/// each must be an object with a string `role`, and a `content` that is a string or an array of
/// content parts (objects with a string `type`; "text" parts with a string `text`). Only an
/// assistant message may omit `content` or send null (its tool calls carry the answer).
std::optional<FieldError> check_messages(const boost::json::array& messages);

/// `raw`, a JSON object that parsed, with the value of its top-level "model" member (each of them)
/// replaced by the JSON string `model`; every other byte as it was.
std::string replace_model(std::string_view raw, std::string_view model);

/// OpenAI's error body: {"error": {"message", "type", "param", "code"}}; an empty `param` is null.
std::string openai_error(std::string_view message, std::string_view type, std::string_view code,
                         std::string_view param = {});

/// `text` cut to at most `max_bytes`, never inside a UTF-8 sequence.
std::string_view utf8_prefix(std::string_view text, std::size_t max_bytes);

}  // namespace mcpclass::route
