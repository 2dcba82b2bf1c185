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
#include "mcpclass/learned/token_classifier.hpp"
#include "mcpclass/routing/router_settings.hpp"
#include "mcpclass/util/limits.hpp"
#include "mcpclass/version.hpp"

#include "mcpclass/util/admission_gate.hpp"

#include <boost/json.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
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

struct ServerSettings {
  std::string name = "mcpclass";
  std::string version = kVersion;
  /// Longest accepted `text`, in characters (Unicode code points).
  std::size_t max_text_length = util::limits::kMaxTextLength;
  /// Passages one reranking may score (the `rerank` tool, POST /rerank, mcpc_rerank_json); more
  /// are refused before any is scored. Each is a text of at most max_text_length.
  std::size_t max_rerank_documents = 128;
  /// `server.http` as written: checked when the document is read, turned into the transport's
  /// options (secrets resolved) by transport::server::read_http_server_options(), which documents
  /// the keys. Kept as written so printing a configuration never shows a secret.
  json::object http;
  /// `server.cache {entries, ttl}`: results of deterministic classifiers (not remote or
  /// composite ones) kept for repeated texts; entries 0 = no cache.
  classify::CacheOptions cache;
  /// `server.reload {watch, debounce}`: `serve` reloads on SIGHUP and, with `watch`, when the
  /// configuration file or a model file it names changes, `debounce` after the last change.
  bool reload_watch = true;
  std::chrono::milliseconds reload_debounce{200};
  /// `server.admission {max_concurrent, max_queue, retry_after}`: classify_text calls running at
  /// once and waiting for their turn; beyond them a call is refused at once (HTTP 503 with
  /// Retry-After, JSON-RPC error -32010). Absent = unbounded (max_concurrent 0).
  util::AdmissionOptions admission;
};

struct ClassifierSettings {
  /// "rules", "remote", "composite", or a learned kind: "embedding_knn", "trained_head",
  /// "torchscript" (these need the libtorch component; see
  /// mcpclass/learned/learned_classifier.hpp).
  std::string kind = "rules";
  classify::RuleSet rules;           ///< Used when kind is "rules".
  learned::LearnedSettings learned;  ///< Used by the learned kinds.
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
  /// `token_classifier`: a token-classification checkpoint (PII detection) served as its own
  /// MCP tool next to classify_text; absent = none. See mcpclass/learned/token_classifier.hpp.
  std::optional<learned::TokenClassifierSettings> token_classifier;
  /// `routing.signals`, `routing.decisions`, `routing.strategy`, `routing.embedding_model`: the
  /// semantic router's decisions (`mcpclass route`); empty = the category picks the model.
  routing::RouterSettings router;
  /// `token_classifier.remote`: the span tool of another MCP server instead of a checkpoint
  /// (mcpclass/remote/remote_token_classifier.hpp; the keys of classifier.remote). With it,
  /// `token_classifier` holds only the name of the tool serve offers; empty = a checkpoint.
  json::object token_classifier_remote;
  /// `telemetry`: `{otlp: {endpoint, headers, ...}}`, the OTLP span exporter
  /// (mcpclass/net/otlp_exporter.hpp, docs/tracing.md), as written (checked at load, `${NAME}`
  /// unresolved); empty = no spans exported.
  json::object telemetry;

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
/// an unsupported `classifier.kind` or invalid rules. `load_progress` (done, total) follows the
/// loading of a large model (classify::make_learned_classifier's).
std::unique_ptr<classify::Classifier> make_classifier(
    const Config& config, const std::function<void(std::size_t, std::size_t)>& load_progress = {});

/// The `token_classifier` section's classifier, a checkpoint or a remote server's tool; null
/// without the section. Throws ConfigError naming the key (an unusable checkpoint, a bad remote
/// section) or, for a remote one, remote::RemoteError (unreachable, no such tool).
std::unique_ptr<learned::TokenClassifier> make_token_classifier(const Config& config);

}  // namespace mcpclass::config
