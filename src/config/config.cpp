#include "mcpclass/config/config.hpp"

#include "config/remote_factory.hpp"

#include "config/document.hpp"
#include "util/config_reader.hpp"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <limits>
#include <sstream>

namespace mcpclass::config {

namespace strict = util::strict;

namespace {

std::optional<std::size_t> count(strict::ObjectReader& r, std::string_view key, std::int64_t min,
                                 std::int64_t max = std::numeric_limits<std::int64_t>::max()) {
  const auto n = r.integer(key);
  if (!n) return std::nullopt;
  if (*n < min || *n > max)
    strict::fail(r.path_of(key),
                 max == std::numeric_limits<std::int64_t>::max()
                     ? "must be an integer >= " + std::to_string(min)
                     : "must be within [" + std::to_string(min) + ", " + std::to_string(max) + "]");
  return static_cast<std::size_t>(*n);
}

void parse_http_limits(strict::ObjectReader& h, HttpSettings& http) {
  http.io_threads = count(h, "io_threads", 1, 64);
  http.max_sessions = count(h, "max_sessions", 1);
  http.max_sse_streams = count(h, "max_sse_streams", 1);
  http.max_sse_streams_per_client = count(h, "max_sse_streams_per_client", 0);
  http.max_connections = count(h, "max_connections", 1);
  http.send_buffer_bytes = count(h, "send_buffer_bytes", 0, 64 * 1024 * 1024);
  http.max_body_bytes = count(h, "max_body_bytes", 1);
  http.max_header_bytes = count(h, "max_header_bytes", 1);
  http.event_store_size = count(h, "event_store_size", 0);
  http.event_store_bytes = count(h, "event_store_bytes", 0);
  http.event_store_session_bytes = count(h, "event_store_session_bytes", 0);
  http.event_store_total_bytes = count(h, "event_store_total_bytes", 0);
  http.session_idle_timeout = h.seconds("session_idle_timeout", false);
  http.read_timeout = h.seconds("read_timeout", false);
  http.idle_timeout = h.seconds("idle_timeout", false);
  http.write_timeout = h.seconds("write_timeout", false);
  http.sse_heartbeat = h.seconds("sse_heartbeat", true);
  http.shutdown_timeout = h.seconds("shutdown_timeout", true);
  http.drain_grace = h.seconds("drain_grace", true);
  http.session_id_prefix = h.string("session_id_prefix").value_or("");
  if (http.session_id_prefix.size() > 64 ||
      !std::all_of(http.session_id_prefix.begin(), http.session_id_prefix.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
      }))
    strict::fail(h.path_of("session_id_prefix"), "must be at most 64 of [A-Za-z0-9._-]");
}

json::object http_jwt_to_json(const HttpJwtSettings& jwt);

json::object http_to_json(const HttpSettings& http) {
  json::object out{{"host", http.host}, {"port", http.port}};
  auto put = [&](std::string_view key, const std::optional<std::size_t>& v) {
    if (v) out[key] = *v;
  };
  auto put_seconds = [&](std::string_view key, const std::optional<std::chrono::milliseconds>& v) {
    if (v) out[key] = static_cast<double>(v->count()) / 1000;
  };
  put("io_threads", http.io_threads);
  put("max_sessions", http.max_sessions);
  put("max_sse_streams", http.max_sse_streams);
  put("max_sse_streams_per_client", http.max_sse_streams_per_client);
  put("max_connections", http.max_connections);
  put("send_buffer_bytes", http.send_buffer_bytes);
  put("max_body_bytes", http.max_body_bytes);
  put("max_header_bytes", http.max_header_bytes);
  put("event_store_size", http.event_store_size);
  put("event_store_bytes", http.event_store_bytes);
  put("event_store_session_bytes", http.event_store_session_bytes);
  put("event_store_total_bytes", http.event_store_total_bytes);
  put_seconds("session_idle_timeout", http.session_idle_timeout);
  put_seconds("read_timeout", http.read_timeout);
  put_seconds("idle_timeout", http.idle_timeout);
  put_seconds("write_timeout", http.write_timeout);
  put_seconds("sse_heartbeat", http.sse_heartbeat);
  put_seconds("shutdown_timeout", http.shutdown_timeout);
  put_seconds("drain_grace", http.drain_grace);
  if (!http.session_id_prefix.empty()) out["session_id_prefix"] = http.session_id_prefix;
  if (!http.tls_cert_file.empty() || !http.tls_key_file.empty())
    out["tls"] = json::object{{"cert_file", http.tls_cert_file}, {"key_file", http.tls_key_file}};
  const HttpAuthSettings& a = http.auth;
  json::object auth;
  auto put_list = [&](std::string_view key, const std::vector<std::string>& list) {
    if (list.empty()) return;
    json::array items;
    for (const auto& item : list) items.emplace_back(item);
    auth[key] = std::move(items);
  };
  put_list("allowed_hosts", a.allowed_hosts);
  put_list("allowed_origins", a.allowed_origins);
  put_list("bearer_tokens", a.bearer_tokens);
  if (!a.bearer_tokens_file.empty()) auth["bearer_tokens_file"] = a.bearer_tokens_file;
  if (a.allow_unauthenticated) auth["allow_unauthenticated"] = true;
  if (a.jwt) auth["jwt"] = http_jwt_to_json(*a.jwt);
  if (!auth.empty()) out["auth"] = std::move(auth);
  return out;
}

// A string or a list of strings.
std::vector<std::string> one_or_more(strict::ObjectReader& r, std::string_view key) {
  const json::value* v = r.get(key);
  if (!v) return {};
  if (v->is_string()) return {std::string(v->get_string())};
  return strict::as_string_list(*v, r.path_of(key));
}

bool is_http_url(const std::string& s) {
  return s.starts_with("https://") || s.starts_with("http://");
}

HttpJwtSettings parse_http_jwt(const json::value& v, const std::string& path) {
  strict::ObjectReader j(v, path);
  HttpJwtSettings jwt;
  auto url = [&](std::string_view key, bool required) {
    auto value = j.string(key).value_or("");
    if (value.empty() && required) strict::fail(j.path_of(key), "is required");
    if (!value.empty() && !is_http_url(value))
      strict::fail(j.path_of(key), "must be an https:// (or http://) URL");
    return value;
  };
  jwt.resource = url("resource", true);
  if (jwt.resource.find('#') != std::string::npos)
    strict::fail(j.path_of("resource"), "must not have a fragment");
  jwt.issuer = j.string("issuer").value_or("");
  if (jwt.issuer.empty()) strict::fail(j.path_of("issuer"), "is required");
  jwt.authorization_servers =
      j.string_list("authorization_servers").value_or(std::vector<std::string>{});
  for (const auto& s : jwt.authorization_servers)
    if (!is_http_url(s))
      strict::fail(j.path_of("authorization_servers"), "'" + s + "' is not an https:// URL");
  jwt.audience = one_or_more(j, "audience");
  for (const auto& a : jwt.audience)
    if (a.empty()) strict::fail(j.path_of("audience"), "must not be empty");
  jwt.jwks_file = j.string("jwks_file").value_or("");
  jwt.jwks_url = url("jwks_url", false);
  if (jwt.jwks_file.empty() == jwt.jwks_url.empty())
    strict::fail(path, "needs exactly one of jwks_file and jwks_url");
  jwt.jwks_ca_file = j.string("jwks_ca_file").value_or("");
  jwt.jwks_timeout = j.seconds("jwks_timeout", false);
  jwt.jwks_refetch_interval = j.seconds("jwks_refetch_interval", true);
  jwt.jwks_max_age = j.seconds("jwks_max_age", false);
  jwt.max_jwks_bytes = count(j, "max_jwks_bytes", 1, 64 * 1024 * 1024);
  jwt.max_jwks_keys = count(j, "max_jwks_keys", 1, 10'000);
  jwt.leeway = j.seconds("leeway", true);
  jwt.max_token_bytes = count(j, "max_token_bytes", 64, 1024 * 1024);
  if (const auto* scopes = j.get("scopes")) {
    strict::ObjectReader sc(*scopes, j.path_of("scopes"));
    auto check = [](const std::vector<std::string>& list, const std::string& where) {
      for (const auto& s : list)
        if (s.empty() || s.find_first_of(" \"\\") != std::string::npos)
          strict::fail(where, "'" + s + "' is not a scope (no spaces, quotes or backslashes)");
    };
    jwt.default_scopes = sc.string_list("default").value_or(std::vector<std::string>{});
    check(jwt.default_scopes, sc.path_of("default"));
    if (const auto* tools = sc.get("tools")) {
      const std::string tools_path = sc.path_of("tools");
      for (const auto& [name, list] : strict::as_object(*tools, tools_path)) {
        const std::string where = strict::member_path(tools_path, name);
        jwt.tool_scopes[std::string(name)] = strict::as_string_list(list, where);
        check(jwt.tool_scopes[std::string(name)], where);
      }
    }
    sc.finish();
  }
  j.finish();
  return jwt;
}

json::object http_jwt_to_json(const HttpJwtSettings& jwt) {
  auto list = [](const std::vector<std::string>& items) {
    json::array out;
    for (const auto& s : items) out.emplace_back(s);
    return out;
  };
  json::object out{{"resource", jwt.resource}, {"issuer", jwt.issuer}};
  if (!jwt.authorization_servers.empty())
    out["authorization_servers"] = list(jwt.authorization_servers);
  if (!jwt.audience.empty()) out["audience"] = list(jwt.audience);
  if (!jwt.jwks_file.empty()) out["jwks_file"] = jwt.jwks_file;
  if (!jwt.jwks_url.empty()) out["jwks_url"] = jwt.jwks_url;
  if (!jwt.jwks_ca_file.empty()) out["jwks_ca_file"] = jwt.jwks_ca_file;
  auto seconds = [&](std::string_view key, const std::optional<std::chrono::milliseconds>& v) {
    if (v) out[key] = static_cast<double>(v->count()) / 1000.0;
  };
  seconds("jwks_timeout", jwt.jwks_timeout);
  seconds("jwks_refetch_interval", jwt.jwks_refetch_interval);
  seconds("jwks_max_age", jwt.jwks_max_age);
  seconds("leeway", jwt.leeway);
  if (jwt.max_jwks_bytes) out["max_jwks_bytes"] = *jwt.max_jwks_bytes;
  if (jwt.max_jwks_keys) out["max_jwks_keys"] = *jwt.max_jwks_keys;
  if (jwt.max_token_bytes) out["max_token_bytes"] = *jwt.max_token_bytes;
  if (!jwt.default_scopes.empty() || !jwt.tool_scopes.empty()) {
    json::object scopes;
    if (!jwt.default_scopes.empty()) scopes["default"] = list(jwt.default_scopes);
    if (!jwt.tool_scopes.empty()) {
      json::object tools;
      for (const auto& [name, items] : jwt.tool_scopes) tools[name] = list(items);
      scopes["tools"] = std::move(tools);
    }
    out["scopes"] = std::move(scopes);
  }
  return out;
}

HttpAuthSettings parse_http_auth(const json::value& v, const std::string& path) {
  strict::ObjectReader a(v, path);
  HttpAuthSettings auth;
  auth.allowed_hosts = a.string_list("allowed_hosts").value_or(auth.allowed_hosts);
  auth.allowed_origins = a.string_list("allowed_origins").value_or(auth.allowed_origins);
  auth.bearer_tokens = a.string_list("bearer_tokens").value_or(auth.bearer_tokens);
  for (const auto& token : auth.bearer_tokens)
    if (token.empty()) strict::fail(a.path_of("bearer_tokens"), "a token must not be empty");
  auth.bearer_tokens_file = a.string("bearer_tokens_file").value_or("");
  auth.allow_unauthenticated = a.boolean("allow_unauthenticated").value_or(false);
  if (const auto* jwt = a.get("jwt")) auth.jwt = parse_http_jwt(*jwt, a.path_of("jwt"));
  a.finish();
  return auth;
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
  if (const auto* cache = r.get("cache")) {
    strict::ObjectReader c(*cache, r.path_of("cache"));
    s.cache.entries = count(c, "entries", 0, 100'000'000).value_or(0);
    s.cache.max_bytes = count(c, "max_bytes", 1).value_or(s.cache.max_bytes);
    s.cache.ttl = c.seconds("ttl", true).value_or(std::chrono::milliseconds(0));
    c.finish();
  }
  if (const auto* reload = r.get("reload")) {
    strict::ObjectReader c(*reload, r.path_of("reload"));
    s.reload_watch = c.boolean("watch").value_or(s.reload_watch);
    s.reload_debounce = c.seconds("debounce", true).value_or(s.reload_debounce);
    c.finish();
  }
  if (const auto* http = r.get("http")) {
    strict::ObjectReader h(*http, r.path_of("http"));
    s.http.host = h.string("host").value_or(s.http.host);
    if (s.http.host.empty()) strict::fail(h.path_of("host"), "must not be empty");
    if (const auto port = h.integer("port")) {
      if (*port < 0 || *port > std::numeric_limits<std::uint16_t>::max())
        strict::fail(h.path_of("port"), "must be within [0, 65535]");
      s.http.port = static_cast<std::uint16_t>(*port);
    }
    if (const auto* tls = h.get("tls")) {
      strict::ObjectReader t(*tls, h.path_of("tls"));
      s.http.tls_cert_file = t.string("cert_file").value_or("");
      s.http.tls_key_file = t.string("key_file").value_or("");
      t.finish();
      if (s.http.tls_cert_file.empty() || s.http.tls_key_file.empty())
        strict::fail(t.path(), "needs both cert_file and key_file");
    }
    if (const auto* auth = h.get("auth")) s.http.auth = parse_http_auth(*auth, h.path_of("auth"));
    parse_http_limits(h, s.http);
    h.finish();
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
  if (classify::is_learned_kind(c.kind))
    c.learned = classify::LearnedSettings::from_json(rest, c.kind, "classifier");
  else
    c.rules = classify::RuleSet::from_json(rest, "classifier");
  return c;
}

json::object server_to_json(const ServerSettings& s) {
  json::object out{{"name", s.name},
                   {"version", s.version},
                   {"max_text_length", s.max_text_length},
                   {"http", http_to_json(s.http)}};
  if (s.cache.entries > 0)
    out["cache"] = json::object{{"entries", s.cache.entries},
                                {"max_bytes", s.cache.max_bytes},
                                {"ttl", static_cast<double>(s.cache.ttl.count()) / 1000}};
  out["reload"] = json::object{{"watch", s.reload_watch},
                               {"debounce", static_cast<double>(s.reload_debounce.count()) / 1000}};
  return out;
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
  r.finish();

  std::optional<Config> defaults;
  if (categories == nullptr) defaults.emplace(default_config());

  Config config{
      categories ? classify::CategorySet::from_json(*categories, "categories")
                 : defaults->categories,
      classifier ? parse_classifier(*classifier)
      : defaults ? defaults->classifier
                 : ClassifierSettings{},
      routing ? classify::RoutingPolicy::from_json(*routing, "routing") : classify::RoutingPolicy{},
      server ? parse_server(*server) : ServerSettings{},
      std::nullopt,
  };
  // The reference's "short math query" rule is a default, not a demand that a math category
  // exist: drop defaulted rules for absent categories, but reject explicit ones.
  const bool explicit_short_queries =
      routing != nullptr && routing->as_object().contains("short_queries");
  if (!explicit_short_queries)
    std::erase_if(config.routing.short_queries,
                  [&](const auto& rule) { return !config.categories.find(rule.category); });
  config.routing.check_against(config.categories, "routing");
  if (route != nullptr) {
    config.route = RouteSettings::from_json(*route, "route");
    config.route->check_against(config.categories, config.routing, "route");
  }
  if (config.classifier.kind == "rules" || config.classifier.kind == "composite") {
    // Compiling once here reports bad patterns and unknown categories at load time, with the
    // key path, instead of on first use.
    classify::RuleClassifier(config.categories, config.classifier.rules, config.routing,
                             "classifier");
  }
  return config;
}

json::object Config::to_json() const {
  json::object classifier_json = classify::is_learned_kind(classifier.kind)
                                     ? classifier.learned.to_json(classifier.kind)
                                     : classifier.rules.to_json();
  json::object out{{"categories", categories.to_json()}};
  json::object cls{{"kind", classifier.kind}};
  for (auto& kv : classifier_json) cls[kv.key()] = std::move(kv.value());
  for (const auto& kv : classifier.remote) cls[kv.key()] = kv.value();
  out["classifier"] = std::move(cls);
  out["routing"] = routing.to_json();
  out["server"] = server_to_json(server);
  if (route) out["route"] = route->to_json();
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
