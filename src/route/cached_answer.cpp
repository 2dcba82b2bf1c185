#include "route/cached_answer.hpp"

#include "net/sse_parser.hpp"

#include <boost/json.hpp>

#include <chrono>
#include <stdexcept>

namespace mcpclass::route {

namespace json = boost::json;

namespace {

const json::object* object_at(const json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  return v ? v->if_object() : nullptr;
}

std::string_view string_at(const json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  return v && v->is_string() ? std::string_view(v->get_string()) : std::string_view();
}

bool kept_finish(std::string_view reason) {
  return reason == "stop" || reason == "length";
}

bool has_tool_calls(const json::object& message) {
  for (const auto* key : {"tool_calls", "function_call"}) {
    const auto* v = message.if_contains(key);
    if (v && !v->is_null() && !(v->is_array() && v->get_array().empty())) return true;
  }
  return false;
}

// The one choice of a body or chunk; null when there is not exactly one, at index 0.
const json::object* only_choice(const json::object& o) {
  const auto* choices = o.if_contains("choices");
  if (choices == nullptr || !choices->is_array() || choices->get_array().size() != 1)
    return nullptr;
  const auto* c = choices->get_array()[0].if_object();
  if (c == nullptr) return nullptr;
  const auto* index = c->if_contains("index");
  if (index != nullptr && !(index->is_int64() && index->get_int64() == 0)) return nullptr;
  return c;
}

std::int64_t now_seconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string chunk(const CachedAnswer& a, std::string_view id, json::object delta,
                  json::value finish) {
  json::object c{{"id", id},
                 {"object", "chat.completion.chunk"},
                 {"created", now_seconds()},
                 {"model", a.model},
                 {"choices", json::array{json::object{{"index", 0},
                                                      {"delta", std::move(delta)},
                                                      {"finish_reason", std::move(finish)}}}}};
  return "data: " + json::serialize(c) + "\n\n";
}

}  // namespace

std::optional<CachedAnswer> answer_from_json(std::string_view body) {
  json::error_code ec;
  const auto v = json::parse(body, ec);
  if (ec || !v.is_object()) return std::nullopt;
  const auto* choice = only_choice(v.get_object());
  if (choice == nullptr) return std::nullopt;
  const auto* message = object_at(*choice, "message");
  if (message == nullptr || has_tool_calls(*message)) return std::nullopt;
  const auto* content = message->if_contains("content");
  const auto finish = string_at(*choice, "finish_reason");
  if (content == nullptr || !content->is_string() || !kept_finish(finish)) return std::nullopt;
  return CachedAnswer{std::string(string_at(v.get_object(), "model")),
                      std::string(content->get_string()), std::string(finish)};
}

std::optional<CachedAnswer> answer_from_sse(std::string_view stream) {
  CachedAnswer out;
  bool done = false, usable = true;
  net::SseParser parser(stream.size() + 1);
  try {
    parser.feed(stream, [&](net::SseEvent e) {
      if (done || !usable) return;
      if (e.data == "[DONE]") {
        done = true;
        return;
      }
      json::error_code ec;
      const auto v = json::parse(e.data, ec);
      const auto* o = ec ? nullptr : v.if_object();
      if (o == nullptr) {
        usable = false;
        return;
      }
      if (out.model.empty()) out.model = string_at(*o, "model");
      const auto* choices = o->if_contains("choices");
      // A usage chunk (stream_options.include_usage) has no choices.
      if (choices && choices->is_array() && choices->get_array().empty()) return;
      const auto* choice = only_choice(*o);
      const auto* delta = choice ? object_at(*choice, "delta") : nullptr;
      if (delta == nullptr || has_tool_calls(*delta)) {
        usable = false;
        return;
      }
      if (const auto* c = delta->if_contains("content"); c && c->is_string())
        out.content += c->get_string();
      if (const auto f = string_at(*choice, "finish_reason"); !f.empty()) out.finish_reason = f;
    });
  } catch (const std::length_error&) {
    return std::nullopt;
  }
  if (!done || !usable || !kept_finish(out.finish_reason)) return std::nullopt;
  return out;
}

std::string answer_json(const CachedAnswer& a, std::string_view id) {
  json::object body{
      {"id", id},
      {"object", "chat.completion"},
      {"created", now_seconds()},
      {"model", a.model},
      {"choices", json::array{json::object{
                      {"index", 0},
                      {"message", json::object{{"role", "assistant"}, {"content", a.content}}},
                      {"finish_reason", a.finish_reason}}}}};
  return json::serialize(body);
}

std::string answer_sse(const CachedAnswer& a, std::string_view id) {
  return chunk(a, id, json::object{{"role", "assistant"}, {"content", ""}}, nullptr) +
         chunk(a, id, json::object{{"content", a.content}}, nullptr) +
         chunk(a, id, json::object{}, json::value(a.finish_reason)) + "data: [DONE]\n\n";
}

}  // namespace mcpclass::route
