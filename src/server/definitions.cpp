// The wire form of tools, resources and prompts, and the small helpers that go with them.
#include "mcpclass/server/resource.hpp"
#include "mcpclass/server/tool.hpp"

#include <condition_variable>
#include <mutex>
#include <stop_token>

namespace mcpclass::server {

namespace {
void put_if(json::object& o, std::string_view key, const std::string& value) {
  if (!value.empty()) o[key] = value;
}
}  // namespace

bool RequestContext::sleep_for(std::chrono::milliseconds duration) const {
  // An interruptible wait: the stop token's callback wakes it, so a cancelled handler returns at
  // once (polling every 5 ms made each cancellation, and each closed session, cost up to 5 ms).
  const std::stop_token token = stop_token();
  std::mutex mutex;
  std::condition_variable_any wake;
  std::unique_lock lock(mutex);
  wake.wait_for(lock, token, duration, [] { return false; });
  return !token.stop_requested();
}

json::object ToolResult::to_json() const& {
  return ToolResult(*this).to_json();
}

json::object ToolResult::to_json() && {
  // In the content's storage: a result built in a per-response resource stays there.
  json::object o(3, content.storage());
  o.emplace("content", std::move(content));
  if (structured_content) o.emplace("structuredContent", std::move(*structured_content));
  o.emplace("isError", is_error);
  if (!meta.empty()) o.emplace("_meta", std::move(meta));
  return o;
}

ToolResult ToolResult::text(std::string text, bool is_error) {
  ToolResult r;
  r.content.push_back(json::object{{"type", "text"}, {"text", std::move(text)}});
  r.is_error = is_error;
  return r;
}

json::object Tool::definition() const {
  json::object o{{"name", name}};
  put_if(o, "title", title);
  put_if(o, "description", description);
  o["inputSchema"] = input_schema;
  if (output_schema) o["outputSchema"] = *output_schema;
  if (!annotations.empty()) o["annotations"] = annotations;
  return o;
}

json::object Resource::definition() const {
  json::object o{{"uri", uri}, {"name", name}};
  put_if(o, "title", title);
  put_if(o, "description", description);
  put_if(o, "mimeType", mime_type);
  return o;
}

json::object ResourceTemplate::definition() const {
  json::object o{{"uriTemplate", uri_template}, {"name", name}};
  put_if(o, "title", title);
  put_if(o, "description", description);
  put_if(o, "mimeType", mime_type);
  return o;
}

json::object Prompt::definition() const {
  json::object o{{"name", name}};
  put_if(o, "title", title);
  put_if(o, "description", description);
  if (!arguments.empty()) {
    json::array args;
    for (const auto& a : arguments) {
      json::object ao{{"name", a.name}};
      put_if(ao, "description", a.description);
      ao["required"] = a.required;
      args.push_back(std::move(ao));
    }
    o["arguments"] = std::move(args);
  }
  return o;
}

std::optional<std::map<std::string, std::string>> match_uri_template(std::string_view tpl,
                                                                     std::string_view uri) {
  std::map<std::string, std::string> vars;
  std::size_t t = 0, u = 0;
  while (t < tpl.size()) {
    if (tpl[t] == '{') {
      const std::size_t close = tpl.find('}', t);
      if (close == std::string_view::npos) return std::nullopt;
      const std::string name(tpl.substr(t + 1, close - t - 1));
      t = close + 1;
      // A variable runs to the next literal character of the template (or '/', or the end).
      const char stop = t < tpl.size() ? tpl[t] : '\0';
      std::size_t end = u;
      while (end < uri.size() && uri[end] != '/' && (stop == '\0' || uri[end] != stop)) ++end;
      if (end == u) return std::nullopt;
      vars[name] = std::string(uri.substr(u, end - u));
      u = end;
    } else {
      if (u >= uri.size() || uri[u] != tpl[t]) return std::nullopt;
      ++t;
      ++u;
    }
  }
  if (u != uri.size()) return std::nullopt;
  return vars;
}

}  // namespace mcpclass::server
