#include "mcpclass/config/route_settings.hpp"

#include "util/config_reader.hpp"

#include <fmt/format.h>
#include <boost/url/parse.hpp>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <optional>
#include <string_view>
#include <utility>

namespace mcpclass::config {

namespace json = boost::json;
namespace strict = util::strict;

namespace {

using strict::enum_name;
using strict::parse_enum;

constexpr std::array<std::pair<const char*, ReasoningStyle>, 5> kStyles{{
    {"none", ReasoningStyle::none},
    {"openai", ReasoningStyle::openai},
    {"vllm", ReasoningStyle::vllm},
    {"deepseek", ReasoningStyle::deepseek},
    {"anthropic", ReasoningStyle::anthropic},
}};
constexpr std::array<std::pair<const char*, ApiFormat>, 2> kFormats{{
    {"openai", ApiFormat::openai},
    {"anthropic", ApiFormat::anthropic},
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

double seconds(std::chrono::milliseconds t) {
  return static_cast<double>(t.count()) / 1000;
}

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

// A Go duration as the Semantic Router's configuration writes them ("30s", "1m30s", "250ms"), in
// seconds; nullopt when `text` is not one.
std::optional<double> go_duration_seconds(std::string_view text) {
  static constexpr std::array<std::pair<std::string_view, double>, 6> kUnits{
      {{"ns", 1e-9}, {"us", 1e-6}, {"ms", 1e-3}, {"s", 1.0}, {"m", 60.0}, {"h", 3600.0}}};
  if (text.empty()) return std::nullopt;
  double total = 0;
  while (!text.empty()) {
    std::size_t digits = 0;
    while (digits < text.size() &&
           (std::isdigit(static_cast<unsigned char>(text[digits])) || text[digits] == '.'))
      ++digits;
    if (digits == 0 || digits > 20) return std::nullopt;
    const std::string number(text.substr(0, digits));
    if (std::count(number.begin(), number.end(), '.') > 1 || number == ".") return std::nullopt;
    text.remove_prefix(digits);
    std::size_t letters = 0;
    while (letters < text.size() && std::isalpha(static_cast<unsigned char>(text[letters])))
      ++letters;
    const auto unit = text.substr(0, letters);
    const auto* found =
        std::find_if(kUnits.begin(), kUnits.end(), [&](const auto& u) { return u.first == unit; });
    if (found == kUnits.end()) return std::nullopt;
    total += std::stod(number) * found->second;
    text.remove_prefix(letters);
  }
  return total;
}

// A `reliability` duration: seconds as a number (as every mcpclass duration), or a Go duration
// string as the Semantic Router writes them; within (0, 86400] seconds, or [0, 86400].
std::optional<std::chrono::milliseconds> duration(strict::ObjectReader& r, std::string_view key,
                                                  bool allow_zero) {
  const auto it = r.object().find(key);
  if (it == r.object().end() || !it->value().is_string()) return r.seconds(key, allow_zero);
  const auto text = it->value().get_string();
  r.get(key);  // consumed
  const auto v = go_duration_seconds(text);
  if (!v)
    strict::fail(r.path_of(key), fmt::format("'{}' is not a duration (seconds as a number, or "
                                             "\"30s\", \"250ms\", \"1m30s\")",
                                             std::string_view(text)));
  if (*v < 0 || (*v == 0 && !allow_zero) || *v > 86'400)
    strict::fail(r.path_of(key), allow_zero ? "must be within [0, 86400] seconds"
                                            : "must be within (0, 86400] seconds");
  return std::chrono::milliseconds(static_cast<long long>(std::llround(*v * 1000)));
}

// "http://h:p/v1" -> "h:p": an endpoint's default name.
std::string host_port(const std::string& url) {
  const auto parsed = boost::urls::parse_uri(url);
  return std::string(parsed->encoded_host_and_port());
}

// `backend_refs[i]`: base_url, or the Semantic Router's endpoint ("host:port") and protocol.
RouteBackend parse_backend(const json::value& v, const std::string& path) {
  strict::ObjectReader r(v, path);
  RouteBackend b;
  b.name = r.string("name").value_or("");
  const auto base_url = r.string("base_url");
  const auto endpoint = r.string("endpoint");
  const auto protocol = r.string("protocol");
  if (base_url && endpoint)
    strict::fail(r.path_of("endpoint"), "give base_url or endpoint (host:port), not both");
  if (base_url) {
    if (protocol) strict::fail(r.path_of("protocol"), "goes with endpoint, not base_url");
    b.base_url = checked_base_url(*base_url, r.path_of("base_url"));
  } else if (endpoint) {
    const std::string scheme = protocol.value_or("http");
    if (scheme != "http" && scheme != "https")
      strict::fail(r.path_of("protocol"), fmt::format("'{}' is not one of http, https", scheme));
    if (endpoint->empty() || endpoint->find('/') != std::string::npos)
      strict::fail(
          r.path_of("endpoint"),
          fmt::format("'{}' is not host:port (the API is at http://host:port/v1)", *endpoint));
    b.base_url = checked_base_url(scheme + "://" + *endpoint + "/v1", r.path_of("endpoint"));
  } else {
    strict::fail(r.path_of("base_url"), "required key is missing (or endpoint: host:port)");
  }
  if (const auto weight = r.integer("weight")) {
    if (*weight < 1 || *weight > 1'000'000)
      strict::fail(r.path_of("weight"), "must be an integer within [1, 1000000]");
    b.weight = static_cast<std::uint32_t>(*weight);
  }
  const auto key = r.string("api_key");
  const auto key_env = r.string("api_key_env");
  if (key && key_env)
    strict::fail(r.path_of("api_key_env"), "give api_key or api_key_env, not both");
  if (key_env) {
    if (key_env->empty()) strict::fail(r.path_of("api_key_env"), "must not be empty");
    b.api_key = "${" + *key_env + "}";
  } else {
    b.api_key = key.value_or("");
  }
  r.finish();
  if (b.name.empty()) b.name = host_port(b.base_url);
  return b;
}

std::vector<RouteBackend> parse_backends(const json::value& v, const std::string& path) {
  const auto& list = strict::as_array(v, path);
  if (list.empty()) strict::fail(path, "must name at least one backend");
  std::vector<RouteBackend> out;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const auto at = strict::index_path(path, i);
    auto b = parse_backend(list[i], at);
    for (const auto& other : out)
      if (other.name == b.name)
        strict::fail(strict::member_path(at, "name"),
                     fmt::format("'{}' names another backend of this model", b.name));
    out.push_back(std::move(b));
  }
  return out;
}

// `reliability`, in the Semantic Router's keys; `timeouts`: its connect_timeout and
// total_timeout too (the providers spelling; route.models has its own keys for them).
void parse_reliability(const json::value& v, const std::string& path, RouteUpstream& u,
                       bool timeouts) {
  strict::ObjectReader r(v, path);
  auto& h = u.reliability;
  if (auto policy = r.string("lb_policy")) {
    if (*policy != "round_robin" && *policy != "weighted_round_robin")
      strict::fail(r.path_of("lb_policy"),
                   fmt::format("'{}' is not one of round_robin, weighted_round_robin (endpoints "
                               "take turns by weight)",
                               *policy));
  }
  if (auto n = r.count("consecutive_5xx", 0, 1'000'000))
    h.consecutive_failures = static_cast<std::uint32_t>(*n);
  if (auto t = duration(r, "base_ejection_time", false)) h.base_ejection_time = *t;
  if (auto t = duration(r, "max_ejection_time", false)) h.max_ejection_time = *t;
  if (h.max_ejection_time < h.base_ejection_time) h.max_ejection_time = h.base_ejection_time;
  if (auto n = r.count("max_ejection_percent", 0, 100))
    h.max_ejection_percent = static_cast<std::uint32_t>(*n);
  if (auto n = r.count("retry_count", 0, 1'000)) h.retry_count = static_cast<std::int32_t>(*n);
  if (auto on = r.string("retry_on")) {
    // Only what never reached the upstream: a generation is never sent twice.
    std::string_view rest = *on;
    while (!rest.empty()) {
      const auto comma = rest.find(',');
      const auto item = rest.substr(0, comma);
      if (item != "connect-failure" && item != "refused-stream")
        strict::fail(r.path_of("retry_on"),
                     fmt::format("'{}' is not retried: only connect-failure and refused-stream "
                                 "(failures before the request was sent) are",
                                 item));
      rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    }
  }
  if (auto p = r.string("health_check_path")) {
    if (!p->empty() && (!p->starts_with('/') || p->find_first_of(" \r\n") != std::string::npos))
      strict::fail(r.path_of("health_check_path"),
                   fmt::format("'{}' is not a path (it starts with '/')", *p));
    h.health_check_path = *p;
  }
  if (auto t = duration(r, "health_check_interval", false)) h.health_check_interval = *t;
  if (auto t = duration(r, "health_check_timeout", false)) h.health_check_timeout = *t;
  if (timeouts) {
    if (auto t = duration(r, "connect_timeout", false)) u.connect_timeout = *t;
    if (auto t = duration(r, "total_timeout", true)) u.timeout = *t;
  }
  r.finish();
}

// The keys both spellings share.
void parse_upstream_common(strict::ObjectReader& r, RouteUpstream& u) {
  u.api_key = r.string("api_key").value_or("");
  if (auto s = r.string("api_format"))
    u.api_format = parse_enum(*s, kFormats, r.path_of("api_format"));
  if (u.api_format == ApiFormat::anthropic) u.reasoning = ReasoningStyle::anthropic;
  if (auto n = r.integer("thinking_budget")) {
    if (*n < 1024 || *n > 1'000'000)
      strict::fail(r.path_of("thinking_budget"),
                   "must be in [1024, 1000000] (Anthropic's minimum is 1024)");
    u.thinking_budget = static_cast<int>(*n);
  }
  for (auto [key, field] : {std::pair{"reasoning_effort", &u.reasoning_effort},
                            std::pair{"reasoning_effort_off", &u.reasoning_effort_off}}) {
    if (auto s = r.string(key)) {
      if (s->empty()) strict::fail(r.path_of(key), "must not be empty");
      *field = *s;
    }
  }
  u.fallback = r.string("fallback").value_or("");
  u.ca_file = r.string("ca_file").value_or("");
}

// A family's fields only mean something in its own API: checked once `key` was read.
void check_reasoning_format(const strict::ObjectReader& r, const RouteUpstream& u,
                            const char* key) {
  if (u.reasoning != ReasoningStyle::none &&
      (u.reasoning == ReasoningStyle::anthropic) != (u.api_format == ApiFormat::anthropic))
    strict::fail(r.path_of(key),
                 fmt::format("'{}' is not a reasoning style of api_format {}",
                             enum_name(u.reasoning, kStyles), enum_name(u.api_format, kFormats)));
}

RouteUpstream parse_upstream(const json::value& v, const std::string& path) {
  strict::ObjectReader r(v, path);
  RouteUpstream u;
  const auto* base_url = r.get("base_url");
  const auto* backends = r.get("backend_refs");
  if (base_url && backends)
    strict::fail(r.path_of("backend_refs"), "give base_url or backend_refs, not both");
  if (backends) {
    u.backend_refs = parse_backends(*backends, r.path_of("backend_refs"));
  } else {
    if (!base_url) strict::fail(r.path_of("base_url"), "required key is missing (or backend_refs)");
    u.base_url = checked_base_url(strict::as_string(*base_url, r.path_of("base_url")),
                                  r.path_of("base_url"));
    u.backend_refs.push_back({host_port(u.base_url), u.base_url, "", 1});
  }
  if (const auto* rel = r.get("reliability"))
    parse_reliability(*rel, r.path_of("reliability"), u, false);
  parse_upstream_common(r, u);
  u.upstream_model = r.string("upstream_model").value_or("");
  if (auto s = r.string("reasoning")) u.reasoning = parse_enum(*s, kStyles, r.path_of("reasoning"));
  check_reasoning_format(r, u, "reasoning");
  if (auto t = r.seconds("connect_timeout", false)) u.connect_timeout = *t;
  if (auto t = r.seconds("timeout", true)) u.timeout = *t;
  r.finish();
  return u;
}

// The Semantic Router's reasoning families (its reasoning_families defaults) and mcpclass's.
constexpr std::array<std::pair<const char*, ReasoningStyle>, 8> kFamilies{{
    {"qwen3", ReasoningStyle::vllm},
    {"deepseek", ReasoningStyle::deepseek},
    {"gpt-oss", ReasoningStyle::openai},
    {"gpt", ReasoningStyle::openai},
    {"openai", ReasoningStyle::openai},
    {"vllm", ReasoningStyle::vllm},
    {"none", ReasoningStyle::none},
    {"", ReasoningStyle::none},
}};

// providers.models[i].reasoning: {family: qwen3}, or inline {type, parameter} as the Semantic
// Router writes a custom family, or a family's name.
ReasoningStyle parse_provider_reasoning(const json::value& v, const std::string& path) {
  if (v.is_string()) return parse_enum(std::string(v.get_string()), kFamilies, path);
  strict::ObjectReader r(v, path);
  const auto family = r.string("family");
  const auto type = r.string("type");
  const auto parameter = r.string("parameter");
  r.finish();
  if (family) {
    if (type || parameter)
      strict::fail(r.path_of("family"), "a family excludes the inline type and parameter");
    return parse_enum(*family, kFamilies, r.path_of("family"));
  }
  if (type == "reasoning_effort") return ReasoningStyle::openai;
  if (type == "chat_template_kwargs") {
    if (parameter == "enable_thinking") return ReasoningStyle::vllm;
    if (parameter == "thinking") return ReasoningStyle::deepseek;
    strict::fail(r.path_of("parameter"), "chat_template_kwargs takes enable_thinking or thinking");
  }
  strict::fail(r.path_of(type ? "type" : "family"),
               "give a family (qwen3, deepseek, gpt-oss, gpt) or type reasoning_effort | "
               "chat_template_kwargs");
}

// providers.models[i], the Semantic Router's spelling of one model.
std::pair<std::string, RouteUpstream> parse_provider_model(const json::value& v,
                                                           const std::string& path,
                                                           const std::string& default_effort) {
  strict::ObjectReader r(v, path);
  std::pair<std::string, RouteUpstream> out;
  auto& [name, u] = out;
  name = strict::as_string(r.required("name"), r.path_of("name"));
  if (name.empty()) strict::fail(r.path_of("name"), "a model name must not be empty");
  if (!default_effort.empty()) u.reasoning_effort = default_effort;
  u.backend_refs = parse_backends(r.required("backend_refs"), r.path_of("backend_refs"));
  if (const auto* rel = r.get("reliability"))
    parse_reliability(*rel, r.path_of("reliability"), u, true);
  parse_upstream_common(r, u);
  u.upstream_model = r.string("provider_model_id").value_or("");
  const auto* reasoning = r.get("reasoning");
  const auto family = r.string("reasoning_family");
  if (reasoning && family)
    strict::fail(r.path_of("reasoning_family"), "give reasoning or reasoning_family, not both");
  if (reasoning) u.reasoning = parse_provider_reasoning(*reasoning, r.path_of("reasoning"));
  if (family) u.reasoning = parse_enum(*family, kFamilies, r.path_of("reasoning_family"));
  check_reasoning_format(r, u, family ? "reasoning_family" : "reasoning");
  r.finish();
  return out;
}

// The top-level `providers` section: `models` (a list) and `defaults.reasoning_effort`.
// `paths`: the key each model was named at, for later errors.
std::map<std::string, RouteUpstream> parse_providers(const json::value& v,
                                                     std::map<std::string, std::string>& paths) {
  strict::ObjectReader r(v, "providers");
  std::string effort;
  if (const auto* d = r.get("defaults")) {
    strict::ObjectReader dr(*d, r.path_of("defaults"));
    if (dr.get("model"))
      strict::fail(dr.path_of("model"),
                   "not read here: name the default model in "
                   "routing.default_model");
    effort = dr.string("reasoning_effort").value_or("");
    dr.finish();
  }
  const auto& list = strict::as_array(r.required("models"), r.path_of("models"));
  r.finish();
  if (list.empty()) strict::fail(r.path_of("models"), "must name at least one model");
  std::map<std::string, RouteUpstream> models;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const auto at = strict::index_path(r.path_of("models"), i);
    auto [name, u] = parse_provider_model(list[i], at, effort);
    if (models.contains(name))
      strict::fail(strict::member_path(at, "name"),
                   fmt::format("'{}' names another model of providers.models", name));
    paths[name] = at;
    models.emplace(std::move(name), std::move(u));
  }
  return models;
}

// `route.admission`: at most 256 places, as for server.admission (each waits on a worker).
RouteAdmission parse_admission(const json::value& v, const std::string& path) {
  strict::ObjectReader r(v, path);
  RouteAdmission a;
  constexpr std::int64_t kMaxPlaces = 256;
  a.limits.max_concurrent = r.count("max_concurrent", 0, kMaxPlaces).value_or(0);
  a.limits.max_queue = r.count("max_queue", 0, kMaxPlaces).value_or(0);
  if (a.limits.max_concurrent + a.limits.max_queue > static_cast<std::size_t>(kMaxPlaces))
    strict::fail(r.path_of("max_queue"), "max_concurrent + max_queue must be at most 256");
  a.limits.retry_after = r.seconds("retry_after", false).value_or(a.limits.retry_after);
  if (auto p = r.string("on_refusal")) {
    if (*p != "fail_open" && *p != "fail_closed")
      strict::fail(r.path_of("on_refusal"), "must be fail_open or fail_closed");
    a.fail_open = *p == "fail_open";
  }
  a.model = r.string("model").value_or("");
  r.finish();
  return a;
}

}  // namespace

std::string_view to_string(ApiFormat format) {
  return enum_name(format, kFormats);
}

RouteSettings RouteSettings::from_json(const json::value& v, const std::string& path) {
  return read(v, path, nullptr);
}

RouteSettings RouteSettings::from_sections(const json::value* route, const json::value* providers) {
  static const json::value kEmpty = json::object{};
  return read(route ? *route : kEmpty, "route", providers);
}

RouteSettings RouteSettings::read(const json::value& v, const std::string& path,
                                  const json::value* providers) {
  strict::ObjectReader r(v, path);
  RouteSettings s;
  if (auto t = r.string("text")) s.text = parse_enum(*t, kTexts, r.path_of("text"));
  if (auto list = r.string_list("routed_models")) {
    if (list->empty()) strict::fail(r.path_of("routed_models"), "must name at least one model");
    s.routed_models = std::move(*list);
  }
  if (auto m = r.string("system_prompt"))
    s.system_prompt = parse_enum(*m, kPromptModes, r.path_of("system_prompt"));
  if (auto g = r.string("passthrough_guard")) s.passthrough_guard = *g;
  if (auto n = r.integer("keep_alive_connections")) {
    if (*n < 0 || *n > 4096)
      strict::fail(r.path_of("keep_alive_connections"), "must be in [0, 4096]");
    s.keep_alive_connections = static_cast<std::size_t>(*n);
  }
  if (auto n = r.integer("upstream_threads")) {
    if (*n < 1 || *n > 64) strict::fail(r.path_of("upstream_threads"), "must be in [1, 64]");
    s.upstream_threads = static_cast<std::size_t>(*n);
  }
  std::optional<std::string> conv_backend;
  const json::value* conv_redis = nullptr;
  std::string conv_redis_path;
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
    if (auto h = cr.string("caller_header")) conv.caller_header = std::move(*h);
    if (auto b = cr.string("backend_type")) {
      if (*b != "memory" && *b != "redis")
        strict::fail(cr.path_of("backend_type"),
                     fmt::format("'{}' is not one of memory, redis", *b));
      conv_backend = std::move(*b);
    }
    conv_redis = cr.get("redis");
    conv_redis_path = cr.path_of("redis");
    cr.finish();
  }
  if (const auto* c = r.get("semantic_cache"))
    s.semantic_cache = SemanticCacheSettings::from_json(*c, r.path_of("semantic_cache"));
  // The conversations share the cache's store unless told otherwise (issue 33: "through the
  // same store as the cache"), under their own key prefix.
  {
    const auto& cache = s.semantic_cache;
    auto& conv = s.conversation;
    conv.backend_type =
        conv_backend.value_or(cache.enabled ? cache.backend_type : std::string("memory"));
    auto defaults = cache.redis;
    defaults.key_prefix = conv.redis.key_prefix;
    conv.redis = conv_redis ? RedisCacheSettings::from_json(*conv_redis, conv_redis_path, defaults)
                            : defaults;
  }
  if (const auto* a = r.get("admission")) s.admission = parse_admission(*a, r.path_of("admission"));
  std::string models_path = r.path_of("models");
  const auto* models_value = r.get("models");
  r.finish();  // a misspelt key is named before "models is missing"
  std::map<std::string, std::string> model_paths;  // for errors: the key each model was named at
  if (providers != nullptr) {
    if (models_value != nullptr)
      strict::fail(models_path,
                   "the models are under providers.models: give route.models or providers.models, "
                   "not both");
    s.models = parse_providers(*providers, model_paths);
    models_path = "providers.models";
  } else {
    if (models_value == nullptr)
      strict::fail(models_path, "required key is missing (or the top-level providers.models)");
    const auto& models = strict::as_object(*models_value, models_path);
    if (models.empty()) strict::fail(models_path, "must name at least one model");
    for (const auto& [name, upstream] : models) {
      const std::string model_path = strict::member_path(models_path, name);
      if (name.empty()) strict::fail(model_path, "a model name must not be empty");
      s.models.emplace(std::string(name), parse_upstream(upstream, model_path));
      model_paths[std::string(name)] = model_path;
    }
  }
  for (const auto& [name, u] : s.models) {
    if (u.fallback.empty()) continue;
    const std::string at = strict::member_path(model_paths[name], "fallback");
    if (u.fallback == name) strict::fail(at, "a model cannot be its own fallback");
    if (!s.models.contains(u.fallback))
      strict::fail(at, fmt::format("'{}' is not a model under {}", u.fallback, models_path));
    // A fallback gets the same request: it must read the same API.
    if (s.models.at(u.fallback).api_format != u.api_format)
      strict::fail(
          at, fmt::format("'{}' has api_format {}, '{}' has {}: a fallback speaks its "
                          "model's API",
                          u.fallback, enum_name(s.models.at(u.fallback).api_format, kFormats), name,
                          enum_name(u.api_format, kFormats)));
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
  if (!admission.model.empty()) need(admission.model, "route.admission.model");
  if (routing.low_confidence.model) need(*routing.low_confidence.model, "routing.low_confidence");
  for (const auto& c : categories)
    if (c.model) need(*c.model, fmt::format("category '{}'", c.name));
}

json::object RouteSettings::to_json() const {
  json::object models_json;
  for (const auto& [name, u] : models) {
    const auto& h = u.reliability;
    json::object m{{"api_format", enum_name(u.api_format, kFormats)},
                   {"reasoning", enum_name(u.reasoning, kStyles)},
                   {"thinking_budget", u.thinking_budget},
                   {"reasoning_effort", u.reasoning_effort},
                   {"reasoning_effort_off", u.reasoning_effort_off},
                   {"connect_timeout", seconds(u.connect_timeout)},
                   {"timeout", seconds(u.timeout)}};
    if (!u.api_key.empty()) m["api_key"] = u.api_key;
    if (!u.upstream_model.empty()) m["upstream_model"] = u.upstream_model;
    if (!u.fallback.empty()) m["fallback"] = u.fallback;
    if (!u.ca_file.empty()) m["ca_file"] = u.ca_file;
    if (!u.base_url.empty()) {
      m["base_url"] = u.base_url;
    } else {
      json::array refs;
      for (const auto& b : u.backend_refs) {
        json::object ref{{"name", b.name}, {"base_url", b.base_url}, {"weight", b.weight}};
        if (!b.api_key.empty()) ref["api_key"] = b.api_key;
        refs.push_back(std::move(ref));
      }
      m["backend_refs"] = std::move(refs);
    }
    json::object reliability{{"consecutive_5xx", h.consecutive_failures},
                             {"base_ejection_time", seconds(h.base_ejection_time)},
                             {"max_ejection_time", seconds(h.max_ejection_time)},
                             {"max_ejection_percent", h.max_ejection_percent},
                             {"health_check_path", h.health_check_path},
                             {"health_check_interval", seconds(h.health_check_interval)},
                             {"health_check_timeout", seconds(h.health_check_timeout)}};
    if (h.retry_count >= 0) reliability["retry_count"] = h.retry_count;
    m["reliability"] = std::move(reliability);
    models_json[name] = std::move(m);
  }
  json::array routed;
  for (const auto& name : routed_models) routed.emplace_back(name);
  return {{"text", enum_name(text, kTexts)},
          {"routed_models", std::move(routed)},
          {"system_prompt", enum_name(system_prompt, kPromptModes)},
          {"passthrough_guard", passthrough_guard},
          {"keep_alive_connections", keep_alive_connections},
          {"upstream_threads", upstream_threads},
          {"conversation",
           {{"enabled", conversation.enabled},
            {"ttl", static_cast<double>(conversation.ttl.count()) / 1000},
            {"switch_margin", conversation.switch_margin},
            {"max_bytes", conversation.max_bytes},
            {"key_headers",
             json::array(conversation.key_headers.begin(), conversation.key_headers.end())},
            {"caller_header", conversation.caller_header},
            {"backend_type", conversation.backend_type},
            {"redis", conversation.redis.to_json()}}},
          {"semantic_cache", semantic_cache.to_json()},
          {"admission",
           {{"max_concurrent", admission.limits.max_concurrent},
            {"max_queue", admission.limits.max_queue},
            {"retry_after", static_cast<double>(admission.limits.retry_after.count()) / 1000},
            {"on_refusal", admission.fail_open ? "fail_open" : "fail_closed"},
            {"model", admission.model}}},
          {"models", std::move(models_json)}};
}

}  // namespace mcpclass::config
