#include "route/chat_request.hpp"

#include <boost/json/serialize.hpp>

namespace mcpclass::route {

namespace json = boost::json;

namespace {

// A message's content: a string, or the text parts of an array (images and audio carry no text).
std::string content_text(const json::value& content) {
  if (const auto* s = content.if_string()) return std::string(*s);
  std::string out;
  if (const auto* parts = content.if_array()) {
    for (const auto& part : *parts) {
      const auto* p = part.if_object();
      if (p == nullptr) continue;
      const auto* type = p->if_contains("type");
      const auto* text = p->if_contains("text");
      if (type && type->is_string() && type->get_string() == "text" && text && text->is_string()) {
        if (!out.empty()) out += '\n';
        out += text->get_string();
      }
    }
  }
  return out;
}

bool has_role(const json::value& message, std::string_view role) {
  const auto* m = message.if_object();
  if (m == nullptr) return false;
  const auto* r = m->if_contains("role");
  return r && r->is_string() && r->get_string() == role;
}

const json::value& content_of(const json::value& message) {
  static const json::value empty;
  const auto* c = message.get_object().if_contains("content");
  return c ? *c : empty;
}

}  // namespace

std::string prompt_text(const json::object& request, config::RouteText mode) {
  const auto* messages = request.if_contains("messages");
  if (messages == nullptr || !messages->is_array()) return {};
  const auto& list = messages->get_array();
  if (mode == config::RouteText::last_user) {
    for (auto it = list.rbegin(); it != list.rend(); ++it)
      if (has_role(*it, "user")) return content_text(content_of(*it));
    return {};
  }
  std::string out;
  bool first = true;
  for (const auto& m : list) {
    if (!has_role(m, "user")) continue;
    if (!first) out += '\n';
    first = false;
    out += content_text(content_of(m));
  }
  return out;
}

void write_reasoning(json::object& request, const config::RouteUpstream& upstream,
                     bool use_reasoning) {
  using config::ReasoningStyle;
  auto template_kwargs = [&]() -> json::object& {
    auto& kwargs = request["chat_template_kwargs"];
    if (!kwargs.is_object()) kwargs = json::object();
    return kwargs.get_object();
  };
  switch (upstream.reasoning) {
    case ReasoningStyle::none:
      return;
    case ReasoningStyle::openai:
      request["reasoning_effort"] =
          use_reasoning ? upstream.reasoning_effort : upstream.reasoning_effort_off;
      return;
    case ReasoningStyle::vllm:
      template_kwargs()["enable_thinking"] = use_reasoning;
      return;
    case ReasoningStyle::deepseek:
      template_kwargs()["thinking"] = use_reasoning;
      return;
  }
}

void apply_system_prompt(json::object& request, const std::string& prompt,
                         config::SystemPromptMode mode) {
  if (prompt.empty() || mode == config::SystemPromptMode::none) return;
  auto* messages = request.if_contains("messages");
  if (messages == nullptr || !messages->is_array()) return;
  auto& list = messages->get_array();
  for (auto& m : list) {
    if (!has_role(m, "system")) continue;
    if (mode == config::SystemPromptMode::replace) m.get_object()["content"] = prompt;
    return;
  }
  list.insert(list.begin(), json::object{{"role", "system"}, {"content", prompt}});
}

std::string openai_error(std::string_view message, std::string_view type, std::string_view code) {
  return json::serialize(json::object{
      {"error",
       json::object{{"message", message}, {"type", type}, {"param", nullptr}, {"code", code}}}});
}

std::string_view utf8_prefix(std::string_view text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  std::size_t end = max_bytes;
  // Back up over continuation bytes (10xxxxxx) to the start of the cut sequence.
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return text.substr(0, end);
}

}  // namespace mcpclass::route
