// The one configuration document every entry point loads: categories, classifier, routing
// policy, server settings. YAML or JSON with the same schema and the same validation; unknown
// keys and wrong types are errors naming the key path. Plain values; functions are thread-safe.
#pragma once

#include "mcpclass/classify/cached_classifier.hpp"
#include "mcpclass/classify/category.hpp"
#include "mcpclass/classify/classifier.hpp"
#include "mcpclass/classify/errors.hpp"
#include "mcpclass/classify/routing_policy.hpp"
#include "mcpclass/classify/rule_classifier.hpp"
#include "mcpclass/config/route_settings.hpp"
#include "mcpclass/learned/learned_settings.hpp"
#include "mcpclass/util/limits.hpp"
#include "mcpclass/version.hpp"

#include <boost/json.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace mcpclass::config {

namespace json = boost::json;

/// Thrown for unreadable files, syntax errors and schema violations; `path()` is the key path
/// (empty for syntax and I/O errors).
using ConfigError = classify::ConfigError;

/// `server.http.auth.jwt`: JWT access tokens from an OAuth authorization server (see
/// transport::JwtAuthOptions for the meaning of each field). Durations in seconds in the document.
struct HttpJwtSettings {
  std::string resource;  ///< required; JWT auth is on when the section is present
  std::string issuer;    ///< required
  std::vector<std::string> authorization_servers;
  std::vector<std::string> audience;  ///< a string or a list in the document; empty = resource
  std::string jwks_file;              ///< exactly one of jwks_file and jwks_url
  std::string jwks_url;
  std::string jwks_ca_file;
  std::optional<std::chrono::milliseconds> jwks_timeout;
  std::optional<std::chrono::milliseconds> jwks_refetch_interval;
  std::optional<std::chrono::milliseconds> jwks_max_age;
  std::optional<std::size_t> max_jwks_bytes;
  std::optional<std::size_t> max_jwks_keys;
  std::optional<std::chrono::milliseconds> leeway;  ///< may be 0
  std::optional<std::size_t> max_token_bytes;
  /// `scopes: {default: [...], tools: {classify_text: [...], ...}}`
  std::vector<std::string> default_scopes;
  std::map<std::string, std::vector<std::string>> tool_scopes;
};

/// `server.http.auth`: who may use the HTTP server. Tokens are kept as written ("${NAME}" names an
/// environment variable) and resolved by service::http_server_options(), so printing a config never
/// shows a secret.
struct HttpAuthSettings {
  std::vector<std::string> allowed_hosts;    ///< Host names besides the local ones ("*": any)
  std::vector<std::string> allowed_origins;  ///< Origins or host names besides the local ones
  std::vector<std::string> bearer_tokens;    ///< Literal tokens, or "${NAME}"
  std::string bearer_tokens_file;            ///< One token per line ('#' lines and blanks skipped)
  /// Serve a non-loopback address without tokens (behind a proxy that authenticates).
  bool allow_unauthenticated = false;
  std::optional<HttpJwtSettings> jwt;  ///< JWT access tokens; absent = off
};

/// `server.http`. The limits are optional: absent ones keep the defaults of
/// transport::HttpServerOptions (see mcpclass/transport/server/http_server.hpp for their meaning);
/// durations are given in seconds in the document.
struct HttpSettings {
  std::string host = "127.0.0.1";
  std::uint16_t port = 8090;
  /// `tls: {cert_file, key_file}`: PEM certificate chain and private key (paths as given, relative
  /// to the working directory). Both set = HTTPS only; both empty = plain HTTP; one alone is a
  /// ConfigError.
  std::string tls_cert_file;
  std::string tls_key_file;
  HttpAuthSettings auth;
  std::optional<std::size_t> io_threads;                  ///< [1, 64]
  std::optional<std::size_t> max_sessions;                ///< >= 1
  std::optional<std::size_t> max_sse_streams;             ///< >= 1
  std::optional<std::size_t> max_sse_streams_per_client;  ///< 0 = no per-address limit
  std::optional<std::size_t> event_store_session_bytes;   ///< >= 0, all streams of a session
  std::optional<std::size_t> max_connections;             ///< >= 1
  std::optional<std::size_t> send_buffer_bytes;           ///< 0 = the kernel's autotuning
  std::optional<std::size_t> max_body_bytes;              ///< >= 1
  std::optional<std::size_t> max_header_bytes;            ///< >= 1
  std::optional<std::size_t> event_store_size;            ///< >= 0
  std::optional<std::size_t> event_store_bytes;           ///< >= 0, per stream
  std::optional<std::size_t> event_store_total_bytes;     ///< >= 0, all streams
  std::optional<std::chrono::milliseconds> session_idle_timeout;
  std::optional<std::chrono::milliseconds> read_timeout;
  std::optional<std::chrono::milliseconds> idle_timeout;
  std::optional<std::chrono::milliseconds> write_timeout;
  std::optional<std::chrono::milliseconds> sse_heartbeat;     ///< 0 = none
  std::optional<std::chrono::milliseconds> shutdown_timeout;  ///< may be 0
  std::optional<std::chrono::milliseconds> drain_grace;       ///< may be 0
  /// Prepended to the session IDs this instance mints (`[A-Za-z0-9._-]`, at most 64), so a load
  /// balancer can route a session's requests to the instance that holds it (docs/deploy.md).
  std::string session_id_prefix;
};

struct ServerSettings {
  std::string name = "mcpclass";
  std::string version = kVersion;
  /// Longest accepted `text`, in characters (Unicode code points).
  std::size_t max_text_length = limits::kMaxTextLength;
  HttpSettings http;
  /// `server.cache {entries, ttl}`: results of deterministic classifiers (not remote or
  /// composite ones) kept for repeated texts; entries 0 = no cache.
  classify::CacheOptions cache;
  /// `server.reload {watch, debounce}`: `serve` reloads on SIGHUP and, with `watch`, when the
  /// configuration file or a model file it names changes, `debounce` after the last change.
  bool reload_watch = true;
  std::chrono::milliseconds reload_debounce{200};
};

struct ClassifierSettings {
  /// "rules", "remote", "composite", or a learned kind: "embedding_knn", "trained_head",
  /// "torchscript" (these need the libtorch component; see
  /// mcpclass/learned/learned_classifier.hpp).
  std::string kind = "rules";
  classify::RuleSet rules;            ///< Used when kind is "rules".
  classify::LearnedSettings learned;  ///< Used by the learned kinds.
  /// `remote` and `composite` sections for kinds "remote" and "composite" (a composite also
  /// uses `rules` for its local side). See mcpclass/remote/remote_classifier.hpp.
  json::object remote;
};

/// Missing top-level sections take defaults: `categories` and `classifier` come from the
/// embedded default together (when `categories` is given, `classifier` defaults to rules with
/// no keywords); `routing` is the reference policy; `server` uses the values above.
struct Config {
  classify::CategorySet categories;
  ClassifierSettings classifier;
  classify::RoutingPolicy routing;
  ServerSettings server;
  /// `route`: the routing proxy's upstreams (`mcpclass route`); absent = not a router.
  std::optional<RouteSettings> route;

  /// The same document shape parse_config() reads (round-trips).
  json::object to_json() const;
};

enum class Format { automatic, yaml, json };

/// Validates a parsed document. Throws ConfigError.
Config config_from_json(const json::value& document);
/// `automatic`: JSON when the first non-blank character is `{`, else YAML. An empty document is
/// the default configuration. Throws ConfigError.
Config parse_config(std::string_view text, Format format = Format::automatic);
/// Format from the extension (.json → JSON, .yaml/.yml → YAML, else automatic). Messages name the
/// file. Throws ConfigError.
Config load_config_file(const std::string& path);

/// The embedded default document (YAML): the reference's 5 categories and keyword rules.
std::string_view default_config_yaml();
/// parse_config(default_config_yaml()).
Config default_config();

/// Builds the configured classifier with the configured routing policy. Throws ConfigError for
/// an unsupported `classifier.kind` or invalid rules.
std::unique_ptr<classify::Classifier> make_classifier(const Config& config);

}  // namespace mcpclass::config
