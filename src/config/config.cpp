#include "mcpclass/config/config.hpp"

#include "config/remote_factory.hpp"

#include "config/document.hpp"
#include "mcpclass/net/otlp_exporter.hpp"
#include "mcpclass/transport/server/http_server_config.hpp"
#include "util/config_reader.hpp"

#include <fmt/format.h>

#include <algorithm>

#include <fstream>
#include <sstream>

namespace mcpclass::config {

namespace strict = util::strict;

namespace {

// Every admitted call holds a worker thread while it waits, so that its deadline is kept.
constexpr std::int64_t kMaxAdmissionPlaces = 256;

// What the document's `server.http` means when printed: the section as written, with the host
// and port it serves on even when they are defaults.
json::object http_to_json(const json::object& http) {
  json::object out = http;
  if (const auto* host = out.if_contains("host"); host == nullptr || host->is_null())
    out["host"] = transport::server::HttpServerOptions{}.host;
  if (const auto* port = out.if_contains("port"); port == nullptr || port->is_null())
    out["port"] = transport::server::kConfigHttpPort;
  return out;
}

ServerSettings parse_server(const json::value& v) {
  strict::ObjectReader r(v, "server");
  ServerSettings s;
  s.name = r.string("name").value_or(s.name);
  if (s.name.empty()) strict::fail(r.path_of("name"), "must not be empty");
  s.version = r.string("version").value_or(s.version);
  if (const auto n = r.integer("max_text_length")) {
    if (*n <= 0) strict::fail(r.path_of("max_text_length"), "must be a positive integer");
    s.max_text_length = static_cast<std::size_t>(*n);
  }
  s.max_rerank_documents =
      r.count("max_rerank_documents", 1, 100'000).value_or(s.max_rerank_documents);
  if (const auto* cache = r.get("cache")) {
    strict::ObjectReader c(*cache, r.path_of("cache"));
    s.cache.entries = c.count("entries", 0, 100'000'000).value_or(0);
    s.cache.max_bytes = c.count("max_bytes", 1).value_or(s.cache.max_bytes);
    s.cache.ttl = c.seconds("ttl", true).value_or(std::chrono::milliseconds(0));
    c.finish();
  }
  if (const auto* reload = r.get("reload")) {
    strict::ObjectReader c(*reload, r.path_of("reload"));
    s.reload_watch = c.boolean("watch").value_or(s.reload_watch);
    s.reload_debounce = c.seconds("debounce", true).value_or(s.reload_debounce);
    c.finish();
  }
  if (const auto* admission = r.get("admission")) {
    strict::ObjectReader c(*admission, r.path_of("admission"));
    s.admission.max_concurrent = c.count("max_concurrent", 1, kMaxAdmissionPlaces).value_or(0);
    s.admission.max_queue = c.count("max_queue", 0, kMaxAdmissionPlaces).value_or(0);
    s.admission.retry_after = c.seconds("retry_after", false).value_or(s.admission.retry_after);
    if (s.admission.max_concurrent == 0)
      strict::fail(c.path_of("max_concurrent"), "is required when server.admission is given");
    if (s.admission.max_concurrent + s.admission.max_queue >
        static_cast<std::size_t>(kMaxAdmissionPlaces))
      strict::fail(c.path_of("max_queue"),
                   fmt::format("max_concurrent + max_queue must be at most {} (each place holds a "
                               "worker thread)",
                               kMaxAdmissionPlaces));
    c.finish();
  }
  if (const auto* http = r.get("http")) {
    s.http = strict::as_object(*http, r.path_of("http"));
    transport::server::read_http_server_options(s.http, r.path_of("http"),
                                                transport::server::HttpSecrets::as_written);
  }
  r.finish();
  return s;
}

ClassifierSettings parse_classifier(const json::value& v) {
  // `kind` belongs to this layer; the rest is the classifier's own schema.
  const auto& obj = strict::as_object(v, "classifier");
  ClassifierSettings c;
  if (const auto* kind = obj.if_contains("kind"); kind != nullptr && !kind->is_null())
    c.kind = strict::as_string(*kind, "classifier.kind");
  json::object rest = obj;
  rest.erase("kind");
  c.remote = detail::take_remote_sections(rest);
  detail::check_remote_sections(c.kind, c.remote);
  if (learned::is_learned_kind(c.kind))
    c.learned = learned::LearnedSettings::from_json(rest, c.kind, "classifier");
  else
    c.rules = classify::RuleSet::from_json(rest, "classifier");
  return c;
}

json::object server_to_json(const ServerSettings& s) {
  json::object out{{"name", s.name},
                   {"version", s.version},
                   {"max_text_length", s.max_text_length},
                   {"max_rerank_documents", s.max_rerank_documents},
                   {"http", http_to_json(s.http)}};
  if (s.cache.entries > 0)
    out["cache"] = json::object{{"entries", s.cache.entries},
                                {"max_bytes", s.cache.max_bytes},
                                {"ttl", static_cast<double>(s.cache.ttl.count()) / 1000}};
  if (s.admission.max_concurrent > 0)
    out["admission"] =
        json::object{{"max_concurrent", s.admission.max_concurrent},
                     {"max_queue", s.admission.max_queue},
                     {"retry_after", static_cast<double>(s.admission.retry_after.count()) / 1000}};
  out["reload"] = json::object{{"watch", s.reload_watch},
                               {"debounce", static_cast<double>(s.reload_debounce.count()) / 1000}};
  return out;
}

// What the decisions name exists: their models (route.models), their domains' categories.
// `models_key`: where the models were named (route.models or providers.models).
void check_router(const Config& config, std::string_view models_key) {
  const auto& router = config.router;
  for (std::size_t i = 0; i < router.signals.domains.size(); ++i) {
    const auto& d = router.signals.domains[i];
    const auto at = strict::index_path("routing.signals.domains", i);
    if (d.categories.empty() && !config.categories.find(d.name))
      throw ConfigError(
          strict::member_path(at, "name"),
          fmt::format("'{}' is not a category; name one with mmlu_categories", d.name));
    for (const auto& c : d.categories)
      if (!config.categories.find(c))
        throw ConfigError(strict::member_path(at, "mmlu_categories"),
                          fmt::format("'{}' is not a category", c));
  }
  if (!config.route) return;
  if (const auto& guard = config.route->passthrough_guard;
      !guard.empty() && std::none_of(router.decisions.begin(), router.decisions.end(),
                                     [&](const auto& d) { return d.name == guard; }))
    throw ConfigError("route.passthrough_guard",
                      fmt::format("no decision is named '{}' (routing.decisions)", guard));
  for (std::size_t i = 0; i < router.decisions.size(); ++i) {
    const auto& refs = router.decisions[i].model_refs;
    for (std::size_t j = 0; j < refs.size(); ++j)
      if (!config.route->models.contains(refs[j].model))
        throw ConfigError(
            strict::member_path(
                strict::index_path(
                    strict::member_path(strict::index_path("routing.decisions", i), "modelRefs"),
                    j),
                "model"),
            fmt::format("no upstream for model '{}' ({})", refs[j].model, models_key));
  }
}

}  // namespace

Config config_from_json(const json::value& document) {
  if (document.is_null()) return default_config();
  strict::ObjectReader r(document, "");
  const auto* categories = r.get("categories");
  const auto* classifier = r.get("classifier");
  const auto* routing = r.get("routing");
  const auto* server = r.get("server");
  const auto* route = r.get("route");
  const auto* providers = r.get("providers");  // the Semantic Router's spelling of route.models
  const auto* token_classifier = r.get("token_classifier");
  const auto* telemetry = r.get("telemetry");
  r.finish();

  std::optional<Config> defaults;
  if (categories == nullptr) defaults.emplace(default_config());
  auto classifier_settings = classifier ? parse_classifier(*classifier)
                             : defaults ? defaults->classifier
                                        : ClassifierSettings{};
  // A checkpoint names its own labels: without a categories list, they are the categories.
  if (categories == nullptr && classifier_settings.kind == "transformer") {
    try {
      defaults->categories = learned::checkpoint_categories(classifier_settings.learned);
    } catch (const classify::ConfigError&) {
      throw;
    } catch (const classify::ClassifyError& e) {
      throw classify::ConfigError("classifier.model", e.what());
    }
  }

  // `routing` holds the classifier's routing policy and the semantic router's decisions.
  json::object policy;
  routing::RouterSettings router;
  if (routing != nullptr) {
    policy = strict::as_object(*routing, "routing");
    router = routing::RouterSettings::take_from(policy, "routing");
  }
  Config config{
      categories ? classify::CategorySet::from_json(*categories, "categories")
                 : defaults->categories,
      std::move(classifier_settings),
      routing ? classify::RoutingPolicy::from_json(policy, "routing") : classify::RoutingPolicy{},
      server ? parse_server(*server) : ServerSettings{},
      std::nullopt,
      std::nullopt,
      std::move(router),
      {},
      {},
  };
  if (telemetry != nullptr) {
    config.telemetry = strict::as_object(*telemetry, "telemetry");
    net::read_telemetry_options(config.telemetry, "telemetry");
  }
  if (token_classifier != nullptr) {
    auto remote = detail::take_remote_token_classifier(*token_classifier);
    config.token_classifier = remote.settings;
    config.token_classifier_remote = std::move(remote.remote);
  }
  // The reference's "short math query" rule is a default, not a demand that a math category
  // exist: drop defaulted rules for absent categories, but reject explicit ones.
  const bool explicit_short_queries =
      routing != nullptr && routing->as_object().contains("short_queries");
  if (!explicit_short_queries)
    std::erase_if(config.routing.short_queries,
                  [&](const auto& rule) { return !config.categories.find(rule.category); });
  config.routing.check_against(config.categories, "routing");
  if (route != nullptr || providers != nullptr) {
    config.route = RouteSettings::from_sections(route, providers);
    config.route->check_against(config.categories, config.routing,
                                providers != nullptr ? "providers" : "route");
    if (config.route->admission.model.empty())
      config.route->admission.model = config.routing.default_model;
  }
  check_router(config, providers != nullptr ? "providers.models" : "route.models");
  if (config.classifier.kind == "rules" || config.classifier.kind == "composite") {
    // Compiling once here reports bad patterns and unknown categories at load time, with the
    // key path, instead of on first use.
    classify::RuleClassifier(config.categories, config.classifier.rules, config.routing,
                             "classifier");
  }
  return config;
}

json::object Config::to_json() const {
  json::object classifier_json = learned::is_learned_kind(classifier.kind)
                                     ? classifier.learned.to_json(classifier.kind)
                                     : classifier.rules.to_json();
  json::object out{{"categories", categories.to_json()}};
  json::object cls{{"kind", classifier.kind}};
  for (auto& kv : classifier_json) cls[kv.key()] = std::move(kv.value());
  for (const auto& kv : classifier.remote) cls[kv.key()] = kv.value();
  out["classifier"] = std::move(cls);
  json::object routing_json = routing.to_json();
  router.to_json(routing_json);
  out["routing"] = std::move(routing_json);
  out["server"] = server_to_json(server);
  if (route) out["route"] = route->to_json();
  if (token_classifier && !token_classifier_remote.empty())
    out["token_classifier"] =
        json::object{{"remote", token_classifier_remote}, {"tool", token_classifier->tool}};
  else if (token_classifier)
    out["token_classifier"] = token_classifier->to_json();
  if (!telemetry.empty()) out["telemetry"] = telemetry;
  return out;
}

Config parse_config(std::string_view text, Format format) {
  if (format == Format::automatic) {
    const auto first = text.find_first_not_of(" \t\r\n");
    if (first == std::string_view::npos) return default_config();
    format = text[first] == '{' ? Format::json : Format::yaml;
  }
  return config_from_json(format == Format::json ? detail::parse_json(text)
                                                 : detail::yaml_to_json(text));
}

Config load_config_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError("", "cannot open config file '" + path + "'");
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) throw ConfigError("", "cannot read config file '" + path + "'");

  Format format = Format::automatic;
  if (path.ends_with(".json"))
    format = Format::json;
  else if (path.ends_with(".yaml") || path.ends_with(".yml"))
    format = Format::yaml;
  try {
    return parse_config(buffer.str(), format);
  } catch (const ConfigError& e) {
    throw ConfigError(e.path(), e.message() + " (in '" + path + "')");
  }
}

}  // namespace mcpclass::config
