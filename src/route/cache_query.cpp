#include "route/cache_query.hpp"

#include "route/chat_request.hpp"
#include "route/digest.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <array>
#include <string_view>

namespace mcpclass::route {

namespace json = boost::json;

namespace {

// Body members that do not change the answer's text.
constexpr std::array<std::string_view, 5> kUnkeyed = {"messages", "stream", "stream_options",
                                                      "user", "metadata"};

std::string_view string_at(const json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  return v && v->is_string() ? std::string_view(v->get_string()) : std::string_view();
}

// The user message without the text the query is (that is compared as the query): its images,
// audio, files and any other member still tell two requests apart.
json::object without_text(json::object user) {
  auto* content = user.if_contains("content");
  if (content == nullptr) return user;
  if (content->is_string()) {
    *content = "";
  } else if (auto* parts = content->if_array()) {
    for (auto& part : *parts)
      if (auto* p = part.if_object(); p && string_at(*p, "type") == "text" && p->contains("text"))
        (*p)["text"] = "";
  }
  return user;
}

}  // namespace

std::string exact_key(const std::string& scope, const std::string& text) {
  return content_key({scope, text});
}

std::optional<CacheQuery> cache_query(const json::object& body, const std::string& route,
                                      config::RouteText text) {
  const auto* messages = body.if_contains("messages");
  if (messages == nullptr || !messages->is_array()) return std::nullopt;
  if (const auto* n = body.if_contains("n"); n && !(n->is_int64() && n->get_int64() == 1))
    return std::nullopt;
  json::array system;
  const json::object* user = nullptr;
  for (const auto& m : messages->get_array()) {
    const auto* o = m.if_object();
    if (o == nullptr) return std::nullopt;
    const auto role = string_at(*o, "role");
    if (role == "user") {
      if (user != nullptr) return std::nullopt;  // several user turns
      user = o;
    } else if (role == "system" || role == "developer") {
      system.push_back(*o);
    } else {
      return std::nullopt;  // a later turn: its answer depends on the turns before
    }
  }
  if (user == nullptr) return std::nullopt;
  CacheQuery q;
  q.text = prompt_text(body, text);
  if (q.text.empty()) return std::nullopt;
  json::object params;
  for (const auto& [key, value] : body)
    if (std::find(kUnkeyed.begin(), kUnkeyed.end(), key) == kUnkeyed.end()) params[key] = value;
  q.scope = content_key({route, json::serialize(system), json::serialize(without_text(*user)),
                         json::serialize(params)});
  q.exact = exact_key(q.scope, q.text);
  return q;
}

}  // namespace mcpclass::route
