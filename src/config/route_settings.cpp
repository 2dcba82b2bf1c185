#include "mcpclass/config/route_settings.hpp"

#include "util/config_reader.hpp"

#include <fmt/format.h>
#include <boost/url/parse.hpp>

#include <algorithm>
#include <array>
#include <utility>

namespace mcpclass::config {

namespace json = boost::json;
namespace strict = util::strict;

namespace {

using strict::enum_name;
using strict::parse_enum;

constexpr std::array<std::pair<const char*, ReasoningStyle>, 4> kStyles{{
    {"none", ReasoningStyle::none},
    {"openai", ReasoningStyle::openai},
    {"vllm", ReasoningStyle::vllm},
    {"deepseek", ReasoningStyle::deepseek},
}};
constexpr std::array<std::pair<const char*, RouteText>, 2> kTexts{{
    {"last_user", RouteText::last_user},
    {"all_user", RouteText::all_user},
}};
constexpr std::array<std::pair<const char*, SystemPromptMode>, 3> kPromptModes{{
    {"none", SystemPromptMode::none},
    {"insert", SystemPromptMode::insert},
    {"replace", SystemPromptMode::replace},
}};

std::string checked_base_url(const std::string& url, const std::string& path) {
  const auto parsed = boost::urls::parse_uri(url);
  if (!parsed || (parsed->scheme() != "http" && parsed->scheme() != "https") ||
      parsed->host().empty())
    strict::fail(path, fmt::format("'{}' is not an http:// or https:// URL", url));
  if (parsed->has_query() || parsed->has_fragment())
    strict::fail(path, fmt::format("'{}': a base URL has no query or fragment", url));
  // "<base_url>/chat/completions": one slash between them.
  std::string out = url;
  while (out.ends_with('/')) out.pop_back();
  return out;
}

RouteUpstream parse_upstream(const json::value& v, const std::string& path) {
  strict::ObjectReader r(v, path);
  RouteUpstream u;
  u.base_url = checked_base_url(strict::as_string(r.required("base_url"), r.path_of("base_url")),
                                r.path_of("base_url"));
  u.api_key = r.string("api_key").value_or("");
  u.upstream_model = r.string("upstream_model").value_or("");
  if (auto s = r.string("reasoning")) u.reasoning = parse_enum(*s, kStyles, r.path_of("reasoning"));
  for (auto [key, field] : {std::pair{"reasoning_effort", &u.reasoning_effort},
                            std::pair{"reasoning_effort_off", &u.reasoning_effort_off}}) {
    if (auto s = r.string(key)) {
      if (s->empty()) strict::fail(r.path_of(key), "must not be empty");
      *field = *s;
    }
  }
  if (auto t = r.seconds("connect_timeout", false)) u.connect_timeout = *t;
  if (auto t = r.seconds("timeout", true)) u.timeout = *t;
  u.fallback = r.string("fallback").value_or("");
  u.ca_file = r.string("ca_file").value_or("");
  r.finish();
  return u;
}

}  // namespace

RouteSettings RouteSettings::from_json(const json::value& v, const std::string& path) {
  strict::ObjectReader r(v, path);
  RouteSettings s;
  if (auto t = r.string("text")) s.text = parse_enum(*t, kTexts, r.path_of("text"));
  if (auto list = r.string_list("routed_models")) {
    if (list->empty()) strict::fail(r.path_of("routed_models"), "must name at least one model");
    s.routed_models = std::move(*list);
  }
  if (auto m = r.string("system_prompt"))
    s.system_prompt = parse_enum(*m, kPromptModes, r.path_of("system_prompt"));
  if (auto n = r.integer("keep_alive_connections")) {
    if (*n < 0 || *n > 4096)
      strict::fail(r.path_of("keep_alive_connections"), "must be in [0, 4096]");
    s.keep_alive_connections = static_cast<std::size_t>(*n);
  }
  if (auto n = r.integer("upstream_threads")) {
    if (*n < 1 || *n > 64) strict::fail(r.path_of("upstream_threads"), "must be in [1, 64]");
    s.upstream_threads = static_cast<std::size_t>(*n);
  }
  if (const auto* c = r.get("conversation")) {
    strict::ObjectReader cr(*c, r.path_of("conversation"));
    auto& conv = s.conversation;
    conv.enabled = cr.boolean("enabled").value_or(true);
    if (auto t = cr.seconds("ttl", false)) conv.ttl = *t;
    if (auto m = cr.number("switch_margin")) {
      if (!(*m >= 0.0 && *m <= 1.0)) strict::fail(cr.path_of("switch_margin"), "must be in [0, 1]");
      conv.switch_margin = *m;
    }
    if (auto b = cr.count("max_bytes", 4096, std::int64_t{1} << 40)) conv.max_bytes = *b;
    if (auto h = cr.string_list("key_headers")) conv.key_headers = std::move(*h);
    cr.finish();
  }
  if (const auto* c = r.get("semantic_cache"))
    s.semantic_cache = SemanticCacheSettings::from_json(*c, r.path_of("semantic_cache"));
  const std::string models_path = r.path_of("models");
  const auto* models_value = r.get("models");
  r.finish();  // a misspelt key is named before "models is missing"
  if (models_value == nullptr) strict::fail(models_path, "required key is missing");
  const auto& models = strict::as_object(*models_value, models_path);
  if (models.empty()) strict::fail(models_path, "must name at least one model");
  for (const auto& [name, upstream] : models) {
    const std::string model_path = strict::member_path(models_path, name);
    if (name.empty()) strict::fail(model_path, "a model name must not be empty");
    s.models.emplace(std::string(name), parse_upstream(upstream, model_path));
  }
  for (const auto& [name, u] : s.models) {
    if (u.fallback.empty()) continue;
    const std::string at = strict::member_path(strict::member_path(models_path, name), "fallback");
    if (u.fallback == name) strict::fail(at, "a model cannot be its own fallback");
    if (!s.models.contains(u.fallback))
      strict::fail(at, fmt::format("'{}' is not a model under {}", u.fallback, models_path));
  }
  for (const auto& alias : s.routed_models) {
    if (s.models.contains(alias))
      strict::fail(r.path_of("routed_models"),
                   fmt::format("'{}' is also a model under {}: a name is routed or passed through, "
                               "not both",
                               alias, models_path));
  }
  return s;
}

void RouteSettings::check_against(const classify::CategorySet& categories,
                                  const classify::RoutingPolicy& routing,
                                  const std::string& path) const {
  auto need = [&](const std::string& model, const std::string& who) {
    if (!models.contains(model))
      throw classify::ConfigError(
          strict::member_path(path, "models"),
          fmt::format("no upstream for model '{}' ({} chooses it)", model, who));
  };
  need(routing.default_model, "routing.default_model");
  if (routing.low_confidence.model) need(*routing.low_confidence.model, "routing.low_confidence");
  for (const auto& c : categories)
    if (c.model) need(*c.model, fmt::format("category '{}'", c.name));
}

json::object RouteSettings::to_json() const {
  json::object models_json;
  for (const auto& [name, u] : models) {
    json::object m{{"base_url", u.base_url},
                   {"reasoning", enum_name(u.reasoning, kStyles)},
                   {"reasoning_effort", u.reasoning_effort},
                   {"reasoning_effort_off", u.reasoning_effort_off},
                   {"connect_timeout", static_cast<double>(u.connect_timeout.count()) / 1000},
                   {"timeout", static_cast<double>(u.timeout.count()) / 1000}};
    if (!u.api_key.empty()) m["api_key"] = u.api_key;
    if (!u.upstream_model.empty()) m["upstream_model"] = u.upstream_model;
    if (!u.fallback.empty()) m["fallback"] = u.fallback;
    if (!u.ca_file.empty()) m["ca_file"] = u.ca_file;
    models_json[name] = std::move(m);
  }
  json::array routed;
  for (const auto& name : routed_models) routed.emplace_back(name);
  return {{"text", enum_name(text, kTexts)},
          {"routed_models", std::move(routed)},
          {"system_prompt", enum_name(system_prompt, kPromptModes)},
          {"keep_alive_connections", keep_alive_connections},
          {"upstream_threads", upstream_threads},
          {"conversation",
           {{"enabled", conversation.enabled},
            {"ttl", static_cast<double>(conversation.ttl.count()) / 1000},
            {"switch_margin", conversation.switch_margin},
            {"max_bytes", conversation.max_bytes},
            {"key_headers",
             json::array(conversation.key_headers.begin(), conversation.key_headers.end())}}},
          {"semantic_cache", semantic_cache.to_json()},
          {"models", std::move(models_json)}};
}

}  // namespace mcpclass::config
