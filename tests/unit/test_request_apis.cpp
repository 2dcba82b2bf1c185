// The text a routed request is classified on, and the checks of its shape, for each API the
// routing proxy serves: chat completions, Anthropic messages, OpenAI responses (docs/route.md).
#include "route/chat_request.hpp"
#include "route/messages_request.hpp"
#include "route/request_api.hpp"
#include "route/responses_request.hpp"

#include <doctest/doctest.h>
#include <boost/json.hpp>

#include <algorithm>
#include <string_view>
#include <vector>

namespace json = boost::json;
using mcpclass::config::RouteText;
using mcpclass::route::RequestApi;

namespace {

json::object body(std::string_view text) {
  return json::parse(text).as_object();
}

std::string error_of(std::string_view text, RequestApi api) {
  auto e = mcpclass::route::check_request(body(text), api);
  return e ? e->message : std::string();
}

}  // namespace

TEST_CASE("messages text comes from user string contents and text blocks only") {
  const auto request = body(R"({"system": "be brief", "messages": [
    {"role": "user", "content": "first question"},
    {"role": "assistant", "content": [{"type": "text", "text": "an answer"}]},
    {"role": "user", "content": [
      {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AA=="}},
      {"type": "text", "text": "what is in"},
      {"type": "tool_result", "tool_use_id": "t1", "content": "tool says hi"},
      {"type": "text", "text": "this picture"}]}]})");
  using mcpclass::route::prompt_text;
  CHECK(prompt_text(request, RouteText::last_user, RequestApi::messages) ==
        "what is in\nthis picture");
  CHECK(prompt_text(request, RouteText::all_user, RequestApi::messages) ==
        "first question\nwhat is in\nthis picture");
}

TEST_CASE("responses text comes from an input string or the input_text parts of user items") {
  using mcpclass::route::prompt_text;
  CHECK(prompt_text(body(R"({"input": "just a string"})"), RouteText::last_user,
                    RequestApi::responses) == "just a string");
  const auto request = body(R"({"instructions": "x", "input": [
    {"role": "user", "content": "plain"},
    {"type": "function_call", "call_id": "c", "name": "f", "arguments": "{}"},
    {"type": "function_call_output", "call_id": "c", "output": "result"},
    {"type": "message", "role": "user", "content": [
      {"type": "input_text", "text": "part one"},
      {"type": "input_image", "image_url": "http://x/y.png"},
      {"type": "text", "text": "not a responses part"},
      {"type": "input_text", "text": "part two"}]}]})");
  CHECK(prompt_text(request, RouteText::last_user, RequestApi::responses) == "part one\npart two");
  CHECK(prompt_text(request, RouteText::all_user, RequestApi::responses) ==
        "plain\npart one\npart two");
  // The chat reading of the same body finds no messages.
  CHECK(prompt_text(request, RouteText::all_user, RequestApi::chat_completions).empty());
}

TEST_CASE("redaction rewrites the texts the classifier reads, and the system texts") {
  auto request = body(R"({"input": [{"role": "user", "content": [
    {"type": "input_text", "text": "mail a@b.c"}, {"type": "input_image", "image_url": "a@b.c"}]}]})");
  const auto changed = mcpclass::route::rewrite_guarded_text(
      request, [](std::string_view t) { return std::string(t == "mail a@b.c" ? "mail [E]" : t); },
      RequestApi::responses);
  CHECK(changed == 1);
  CHECK(request.at("input").at(0).at("content").at(0).at("text") == "mail [E]");
  CHECK(request.at("input").at(0).at("content").at(1).at("image_url") == "a@b.c");
  auto string_input = body(R"({"input": "mail a@b.c"})");
  CHECK(mcpclass::route::rewrite_guarded_text(
            string_input, [](std::string_view) { return std::string("x"); },
            RequestApi::responses) == 1);
  CHECK(string_input.at("input") == "x");
  auto with_instructions = body(R"({"input": "a", "instructions": "b"})");
  CHECK(mcpclass::route::rewrite_guarded_text(
            with_instructions, [](std::string_view t) { return std::string(t) + "!"; },
            RequestApi::responses) == 2);
  CHECK(with_instructions.at("instructions") == "b!");
}

TEST_CASE("the guards read every user and system text of each API (issue 47)") {
  using mcpclass::route::guarded_texts;
  const auto chat = body(R"({"messages": [{"role": "system", "content": "s"},
    {"role": "user", "content": "u1"}, {"role": "assistant", "content": "a"},
    {"role": "developer", "content": [{"type": "text", "text": "d"}]},
    {"role": "tool", "content": "t"},
    {"role": "user", "content": [{"type": "text", "text": "u2"},
                                 {"type": "image_url", "image_url": {"url": "x"}}]}]})");
  CHECK(guarded_texts(chat) == std::vector<std::string_view>{"s", "u1", "d", "u2"});
  const auto messages = body(R"({"system": [{"type": "text", "text": "sys"}],
    "messages": [{"role": "user", "content": "u"}, {"role": "assistant", "content": "a"}]})");
  CHECK(guarded_texts(messages, RequestApi::messages) == std::vector<std::string_view>{"u", "sys"});
  const auto responses = body(R"({"instructions": "i", "input": [
    {"role": "system", "content": "s"}, {"type": "function_call", "name": "f"},
    {"role": "user", "content": [{"type": "input_text", "text": "u"}]}]})");
  CHECK(guarded_texts(responses, RequestApi::responses) ==
        std::vector<std::string_view>{"s", "u", "i"});
}

TEST_CASE("text pieces cover a long text, overlapping, never inside a UTF-8 sequence") {
  using mcpclass::route::text_pieces;
  CHECK(text_pieces("short", 100) == std::vector<std::string_view>{"short"});
  std::string text;
  for (int i = 0; i < 300; ++i) text += "é-" + std::to_string(i) + " ";
  const auto pieces = text_pieces(text, 100);
  REQUIRE(pieces.size() > 1);
  std::size_t covered = 0;
  for (const auto piece : pieces) {
    CHECK(piece.size() <= 100);
    const auto at = static_cast<std::size_t>(piece.data() - text.data());
    CHECK(at <= covered);  // no gap
    CHECK((static_cast<unsigned char>(text[at]) & 0xC0) != 0x80);
    if (at > 0) CHECK(covered - at >= 20);  // overlaps the piece before by size / 4 or so
    covered = at + piece.size();
  }
  CHECK(covered == text.size());
  // A phrase a cut would split is whole in some piece.
  const std::string needle = "é-150 ";
  CHECK(std::any_of(pieces.begin(), pieces.end(),
                    [&](std::string_view p) { return p.find(needle) != std::string_view::npos; }));
}

TEST_CASE("messages requests of the wrong shape are named by their field") {
  CHECK(error_of(R"({"messages": [{"role": "user", "content": "hi"}]})", RequestApi::messages)
            .empty());
  CHECK(error_of(R"({"messages": [{"role": "user", "content": [{"type": "hologram"}]}]})",
                 RequestApi::messages)
            .starts_with("Invalid 'messages[0].content[0].type': unknown content part type "
                         "'hologram'"));
  CHECK(error_of(R"({"messages": [{"role": "system", "content": "x"}]})", RequestApi::messages) ==
        "Invalid 'messages[0].role': 'system' is not one of user, assistant");
  CHECK(error_of(R"({"messages": [{"role": "assistant"}]})", RequestApi::messages) ==
        "Invalid 'messages[0].content': is required");
  CHECK(error_of(R"({"messages": [], "system": [{"type": "image"}]})", RequestApi::messages)
            .starts_with("Invalid 'system[0].type': unknown content part type 'image'"));
  CHECK(error_of(R"({"messages": [], "system": 3})", RequestApi::messages) ==
        "Invalid 'system': must be a string or an array of content parts, got number");
  CHECK(error_of(R"({"messages": [{"role": "user", "content": [{"type": "text", "text": 1}]}]})",
                 RequestApi::messages) ==
        "Invalid 'messages[0].content[0].text': must be a string, got number");
}

TEST_CASE("responses requests of the wrong shape are named by their field") {
  CHECK(error_of(R"({"input": "hi"})", RequestApi::responses).empty());
  CHECK(error_of(R"({"input": [{"type": "reasoning", "summary": []}]})", RequestApi::responses)
            .empty());
  CHECK(error_of(R"({"input": [3]})", RequestApi::responses) ==
        "Invalid 'input[0]': must be an object (an input item), got number");
  CHECK(error_of(R"({"input": [{"content": "x"}]})", RequestApi::responses) ==
        "Invalid 'input[0].type': is required (an item without a role)");
  CHECK(error_of(R"({"input": [{"role": "user", "content": [{"type": "text", "text": "x"}]}]})",
                 RequestApi::responses)
            .starts_with("Invalid 'input[0].content[0].type': unknown content part type 'text'"));
  CHECK(error_of(R"({"input": "x", "instructions": 5})", RequestApi::responses) ==
        "Invalid 'instructions': must be a string, got number");
  CHECK(mcpclass::route::missing_input(body(R"({"input": 5})"), RequestApi::responses).has_value());
  CHECK(mcpclass::route::missing_input(body(R"({"messages": {}})"), RequestApi::messages)
            .has_value());
}

TEST_CASE("the system prompt goes where each API keeps it") {
  using mcpclass::config::SystemPromptMode;
  using mcpclass::route::apply_system_prompt;
  auto m = body(R"({"messages": [], "system": [{"type": "text", "text": "client's"}]})");
  CHECK_FALSE(apply_system_prompt(m, RequestApi::messages, "router's", SystemPromptMode::insert));
  CHECK(apply_system_prompt(m, RequestApi::messages, "router's", SystemPromptMode::replace));
  CHECK(m.at("system") == "router's");
  CHECK_FALSE(apply_system_prompt(m, RequestApi::messages, "router's", SystemPromptMode::replace));
  auto r = body(R"({"input": "x"})");
  CHECK(apply_system_prompt(r, RequestApi::responses, "router's", SystemPromptMode::insert));
  CHECK(r.at("instructions") == "router's");
}

TEST_CASE(
    "the reasoning switch is a thinking block for anthropic and reasoning.effort for responses") {
  mcpclass::config::RouteUpstream claude;
  claude.api_format = mcpclass::config::ApiFormat::anthropic;
  claude.reasoning = mcpclass::config::ReasoningStyle::anthropic;
  claude.thinking_budget = 2048;
  auto m = body(R"({"thinking": {"type": "enabled", "budget_tokens": 99999}})");
  mcpclass::route::write_reasoning(m, RequestApi::messages, claude, true);
  CHECK(json::serialize(m.at("thinking")) == R"({"type":"enabled","budget_tokens":2048})");
  mcpclass::route::write_reasoning(m, RequestApi::messages, claude, false);
  CHECK(json::serialize(m.at("thinking")) == R"({"type":"disabled"})");

  mcpclass::config::RouteUpstream gpt;
  gpt.reasoning = mcpclass::config::ReasoningStyle::openai;
  auto r = body(R"({"reasoning": {"summary": "auto", "effort": "minimal"}})");
  mcpclass::route::write_reasoning(r, RequestApi::responses, gpt, true);
  CHECK(json::serialize(r.at("reasoning")) == R"({"summary":"auto","effort":"high"})");
  CHECK_FALSE(r.contains("reasoning_effort"));
}

TEST_CASE("errors take the shape of the API the client called") {
  CHECK(mcpclass::route::api_error(RequestApi::messages, 400, "bad", "invalid_request_error",
                                   "invalid_request") ==
        R"({"type":"error","error":{"type":"invalid_request_error","message":"bad"}})");
  CHECK(mcpclass::route::anthropic_error_type(502) == "api_error");
  CHECK(mcpclass::route::anthropic_error_type(503) == "overloaded_error");
  CHECK(json::parse(mcpclass::route::api_error(RequestApi::responses, 404, "none",
                                               "invalid_request_error", "model_not_found"))
            .at("error")
            .at("code") == "model_not_found");
}
