#include "route/chat_request.hpp"

#include "util/config_reader.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>
#include <variant>

namespace mcpclass::route {

namespace json = boost::json;

namespace {

bool has_role(const json::value& message, std::string_view role) {
  const auto* m = message.if_object();
  if (m == nullptr) return false;
  const auto* r = m->if_contains("role");
  return r && r->is_string() && r->get_string() == role;
}

bool is_text_part(std::string_view type, RequestApi api) {
  if (api == RequestApi::responses) return type == "input_text" || type == "output_text";
  return type == "text";
}

// The one walk over a request's turns that prompt_text() and the guards' walk share:
// visit(content) for the content of each message of `api`'s list whose role `wanted(role)`, in
// order. A Responses `input` string is a user message's content; other items (tool calls,
// reasoning) have no role.
template <class Object, class Wanted, class Visit>
void for_each_content(Object& request, RequestApi api, Wanted&& wanted, Visit&& visit) {
  auto* list = request.if_contains(api == RequestApi::responses ? "input" : "messages");
  if (list == nullptr) return;
  if (api == RequestApi::responses && list->is_string()) {
    if (wanted("user")) visit(*list);
    return;
  }
  if (!list->is_array()) return;
  for (auto& m : list->get_array()) {
    auto* o = m.if_object();
    const auto* role = o ? o->if_contains("role") : nullptr;
    if (role == nullptr || !role->is_string() || !wanted(std::string_view(role->get_string())))
      continue;
    if (auto* content = o->if_contains("content")) visit(*content);
  }
}

template <class Object, class Visit>
void for_each_user_content(Object& request, RequestApi api, Visit&& visit) {
  for_each_content(
      request, api, [](std::string_view role) { return role == "user"; },
      std::forward<Visit>(visit));
}

// visit(text) for a content's text: the string, or each text part's `text` (images, audio,
// documents and tool results carry none).
template <class Value, class Visit>
void for_each_text(Value& content, RequestApi api, Visit&& visit) {
  if (content.is_string()) return visit(content);
  auto* parts = content.if_array();
  if (parts == nullptr) return;
  for (auto& part : *parts) {
    auto* p = part.if_object();
    if (p == nullptr) continue;
    const auto* type = p->if_contains("type");
    auto* text = p->if_contains("text");
    if (type && type->is_string() && is_text_part(type->get_string(), api) && text &&
        text->is_string())
      visit(*text);
  }
}

std::string content_text(const json::value& content, RequestApi api) {
  std::string out;
  bool first = true;
  for_each_text(content, api, [&](const json::value& text) {
    if (!first) out += '\n';
    first = false;
    out += text.get_string();
  });
  return out;
}

bool listed(std::span<const std::string_view> list, std::string_view value) {
  return list.empty() || std::find(list.begin(), list.end(), value) != list.end();
}

// `object.key` must be a string: that string, or the problem.
std::variant<std::string_view, FieldError> string_member(const json::object& object,
                                                         std::string_view key,
                                                         const std::string& path) {
  const std::string at = fmt::format("{}.{}", path, key);
  const auto* value = object.if_contains(key);
  if (value == nullptr) return field_error(at, "is required");
  if (!value->is_string()) return wrong_kind(at, "a string", *value);
  return std::string_view(value->get_string());
}

std::optional<FieldError> check_part(const json::value& part, const std::string& path,
                                     const MessageRules& rules) {
  const auto* p = part.if_object();
  if (p == nullptr) return wrong_kind(path, "an object (a content part)", part);
  const auto type = string_member(*p, "type", path);
  if (const auto* e = std::get_if<FieldError>(&type)) return *e;
  const auto t = std::get<std::string_view>(type);
  if (!listed(rules.part_types, t))
    return field_error(path + ".type", fmt::format("unknown content part type '{}' (expected one "
                                                   "of {})",
                                                   t, fmt::join(rules.part_types, ", ")));
  if (!listed(rules.text_types, t) || rules.text_types.empty()) return {};
  const auto text = string_member(*p, "text", path);
  if (const auto* e = std::get_if<FieldError>(&text)) return *e;
  return {};
}

const std::string_view kChatTextTypes[] = {"text"};
const MessageRules kChatRules{.roles = {},
                              .part_types = {},
                              .text_types = kChatTextTypes,
                              .assistant_may_omit_content = true};

}  // namespace

FieldError field_error(std::string param, std::string_view problem) {
  std::string message = fmt::format("Invalid '{}': {}", param, problem);
  return {.param = std::move(param), .message = std::move(message)};
}

FieldError wrong_kind(std::string param, std::string_view expected, const json::value& got) {
  return field_error(std::move(param),
                     fmt::format("must be {}, got {}", expected, util::strict::type_name(got)));
}

std::optional<FieldError> check_message(const json::value& message, const std::string& path,
                                        const MessageRules& rules) {
  const auto* m = message.if_object();
  if (m == nullptr) return wrong_kind(path, "an object", message);
  const auto role = string_member(*m, "role", path);
  if (const auto* e = std::get_if<FieldError>(&role)) return *e;
  const auto r = std::get<std::string_view>(role);
  if (!listed(rules.roles, r))
    return field_error(path + ".role",
                       fmt::format("'{}' is not one of {}", r, fmt::join(rules.roles, ", ")));
  const bool optional = rules.assistant_may_omit_content && r == "assistant";
  const auto* content = m->if_contains("content");
  const std::string at = path + ".content";
  if (content == nullptr)
    return optional ? std::nullopt : std::optional(field_error(at, "is required"));
  if (optional && content->is_null()) return {};
  return check_content(*content, at, rules);
}

std::optional<FieldError> check_content(const json::value& content, const std::string& path,
                                        const MessageRules& rules) {
  if (content.is_string()) return {};
  const auto* parts = content.if_array();
  if (parts == nullptr) return wrong_kind(path, "a string or an array of content parts", content);
  for (std::size_t i = 0; i < parts->size(); ++i)
    if (auto e = check_part((*parts)[i], fmt::format("{}[{}]", path, i), rules)) return e;
  return {};
}

namespace {

// --- A scanner over JSON text that already parsed (so it is well formed) ---

std::size_t skip_space(std::string_view s, std::size_t i) {
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')) ++i;
  return i;
}

// `i` at a string's opening quote: the index after its closing quote.
std::size_t string_end(std::string_view s, std::size_t i) {
  for (++i; i < s.size() && s[i] != '"'; ++i)
    if (s[i] == '\\') ++i;
  return std::min(i + 1, s.size());
}

// `i` at a value's first byte: the index after its last one.
std::size_t value_end(std::string_view s, std::size_t i) {
  if (i >= s.size()) return s.size();
  if (s[i] == '"') return string_end(s, i);
  if (s[i] != '{' && s[i] != '[') {
    while (i < s.size() && s[i] != ',' && s[i] != '}' && s[i] != ']' && s[i] != ' ' &&
           s[i] != '\t' && s[i] != '\n' && s[i] != '\r')
      ++i;
    return i;
  }
  std::size_t depth = 0;
  while (i < s.size()) {
    const char c = s[i];
    if (c == '"') {
      i = string_end(s, i);
      continue;
    }
    ++i;
    if (c == '{' || c == '[') ++depth;
    if ((c == '}' || c == ']') && --depth == 0) break;
  }
  return i;
}

// A member name as the parser read it (escapes such as "mod\u0065l" decoded).
std::string key_of(std::string_view token) {
  if (token.find('\\') == std::string_view::npos)
    return std::string(token.substr(1, token.size() - 2));
  return std::string(json::parse(token).as_string());
}

}  // namespace

std::optional<FieldError> check_messages(const json::array& messages) {
  for (std::size_t i = 0; i < messages.size(); ++i)
    if (auto e = check_message(messages[i], fmt::format("messages[{}]", i), kChatRules)) return e;
  return {};
}

std::string replace_model(std::string_view raw, std::string_view model) {
  const std::string value = json::serialize(json::value(model));
  std::string out;
  std::size_t copied = 0;
  std::size_t i = skip_space(raw, 0);
  if (i >= raw.size() || raw[i] != '{') return std::string(raw);
  i = skip_space(raw, i + 1);
  while (i < raw.size() && raw[i] == '"') {
    const std::size_t key_end = string_end(raw, i);
    const bool is_model = key_of(raw.substr(i, key_end - i)) == "model";
    i = skip_space(raw, key_end);
    if (i >= raw.size() || raw[i] != ':') break;
    const std::size_t start = skip_space(raw, i + 1);
    const std::size_t end = value_end(raw, start);
    if (is_model) {
      out.append(raw.substr(copied, start - copied)).append(value);
      copied = end;
    }
    i = skip_space(raw, end);
    if (i < raw.size() && raw[i] == ',') i = skip_space(raw, i + 1);
  }
  out.append(raw.substr(copied));
  return out;
}

std::string prompt_text(const json::object& request, config::RouteText mode, RequestApi api) {
  if (mode == config::RouteText::last_user) {
    const json::value* last = nullptr;
    for_each_user_content(request, api, [&](const json::value& content) { last = &content; });
    return last ? content_text(*last, api) : std::string();
  }
  std::string out;
  bool first = true;
  for_each_user_content(request, api, [&](const json::value& content) {
    if (!first) out += '\n';
    first = false;
    out += content_text(content, api);
  });
  return out;
}

namespace {

// visit(text) for every text a guard reads: each string content or text part of the user,
// system and developer messages, Anthropic's `system` and the Responses `instructions`.
template <class Object, class Visit>
void for_each_guarded_text(Object& request, RequestApi api, Visit&& visit) {
  for_each_content(
      request, api,
      [](std::string_view role) {
        return role == "user" || role == "system" || role == "developer";
      },
      [&](auto& content) { for_each_text(content, api, visit); });
  const char* top = api == RequestApi::messages    ? "system"
                    : api == RequestApi::responses ? "instructions"
                                                   : nullptr;
  if (top == nullptr) return;
  if (auto* value = request.if_contains(top)) for_each_text(*value, api, visit);
}

}  // namespace

std::vector<std::string_view> guarded_texts(const json::object& request, RequestApi api) {
  std::vector<std::string_view> out;
  for_each_guarded_text(request, api,
                        [&](const json::value& text) { out.push_back(text.get_string()); });
  return out;
}

std::size_t rewrite_guarded_text(json::object& request,
                                 const std::function<std::string(std::string_view)>& rewrite,
                                 RequestApi api) {
  std::size_t changed = 0;
  for_each_guarded_text(request, api, [&](json::value& text) {
    auto next = rewrite(text.get_string());
    if (next != text.get_string()) {
      text = std::move(next);
      ++changed;
    }
  });
  return changed;
}

std::vector<std::string_view> text_pieces(std::string_view text, std::size_t size) {
  std::vector<std::string_view> out;
  if (size == 0 || text.size() <= size) {
    out.push_back(text);
    return out;
  }
  // Each piece repeats the end of the one before, so that what a cut splits is whole in one.
  const std::size_t overlap = std::min<std::size_t>(size / 4, 1024);
  for (std::size_t at = 0;;) {
    const auto piece = utf8_prefix(text.substr(at), size);
    out.push_back(piece);
    if (at + piece.size() >= text.size()) return out;
    // The next piece starts `overlap` bytes back, at a character boundary, and always advances.
    std::size_t next = at + piece.size() - overlap;
    while (next > at + 1 && (static_cast<unsigned char>(text[next]) & 0xC0) == 0x80) --next;
    at = std::max(next, at + 1);
  }
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
    case ReasoningStyle::anthropic:  // not a chat completion upstream's (the config checks it)
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

bool apply_system_prompt(json::object& request, const std::string& prompt,
                         config::SystemPromptMode mode) {
  if (prompt.empty() || mode == config::SystemPromptMode::none) return false;
  auto* messages = request.if_contains("messages");
  if (messages == nullptr || !messages->is_array()) return false;
  auto& list = messages->get_array();
  for (auto& m : list) {
    if (!has_role(m, "system")) continue;
    if (mode != config::SystemPromptMode::replace) return false;
    auto& content = m.get_object()["content"];
    if (content.is_string() && content.get_string() == prompt) return false;
    content = prompt;
    return true;
  }
  list.insert(list.begin(), json::object{{"role", "system"}, {"content", prompt}});
  return true;
}

std::string openai_error(std::string_view message, std::string_view type, std::string_view code,
                         std::string_view param) {
  json::value p = nullptr;
  if (!param.empty()) p = param;
  return json::serialize(json::object{
      {"error", json::object{{"message", message}, {"type", type}, {"param", p}, {"code", code}}}});
}

std::string_view utf8_prefix(std::string_view text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  std::size_t end = max_bytes;
  // Back up over continuation bytes (10xxxxxx) to the start of the cut sequence.
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return text.substr(0, end);
}

}  // namespace mcpclass::route
