// The `route` section: what `mcpclass route` (mcpclass/route/route_proxy.hpp) forwards where.
// docs/route.md describes every key.
// Thread-safety: plain values.
#pragma once

#include "mcpclass/classify/category.hpp"
#include "mcpclass/classify/routing_policy.hpp"
#include "mcpclass/config/semantic_cache_settings.hpp"
#include "mcpclass/util/admission_gate.hpp"

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace mcpclass::config {

/// How an upstream family reads the reasoning decision.
enum class ReasoningStyle {
  none,       ///< not written
  openai,     ///< "reasoning_effort"
  vllm,       ///< "chat_template_kwargs": {"enable_thinking": bool} (Qwen3 templates)
  deepseek,   ///< "chat_template_kwargs": {"thinking": bool}
  anthropic,  ///< "thinking": {"type": "enabled", "budget_tokens": N} or {"type": "disabled"}
};

/// The API an upstream speaks (the Semantic Router's model_config api_format): `openai` serves
/// <base_url>/chat/completions and /responses, `anthropic` <base_url>/messages.
enum class ApiFormat { openai, anthropic };
/// "openai", "anthropic": as the configuration writes it.
std::string_view to_string(ApiFormat format);
/// One endpoint of a model's pool (`backend_refs[i]`, as the Semantic Router spells it).
struct RouteBackend {
  std::string name;          ///< unique within the model (the metrics' label); default host:port
  std::string base_url;      ///< http:// or https://, e.g. "http://127.0.0.1:8000/v1"
  std::string api_key;       ///< as written; empty = the model's api_key
  std::uint32_t weight = 1;  ///< its share of the model's requests, >= 1
};

/// A model's `reliability` (the Semantic Router's keys): passive health of its endpoints and
/// optional active checks. Only failures before a request was sent are retried.
struct EndpointReliability {
  /// Failures in a row (connect failures, 5xx answers, timeouts, broken answers) that eject an
  /// endpoint; 0 = never ejected.
  std::uint32_t consecutive_failures = 5;
  /// An ejection lasts base × the endpoint's ejections so far, at most max_ejection_time.
  std::chrono::milliseconds base_ejection_time{30'000};
  std::chrono::milliseconds max_ejection_time{300'000};
  /// At most this share of a pool is ejected at once (rounded down: 50% of one endpoint is 0).
  std::uint32_t max_ejection_percent = 50;
  /// Other endpoints of the pool a connect failure is retried on; -1 = all of them.
  std::int32_t retry_count = -1;
  std::string health_check_path;  ///< "/health": a GET every interval; empty = no active checks
  std::chrono::milliseconds health_check_interval{10'000};
  std::chrono::milliseconds health_check_timeout{2'000};
};

/// One model the proxy can send requests to.
struct RouteUpstream {
  /// As written (a pool of one endpoint of weight 1); empty when backend_refs were written.
  std::string base_url;
  /// The model's endpoints, never empty: `backend_refs`, or the one `base_url` names.
  std::vector<RouteBackend> backend_refs;
  EndpointReliability reliability;
  std::string api_key;         ///< as written: "${NAME}" is resolved when the proxy starts
  std::string upstream_model;  ///< the name sent upstream; empty = the model's key
  ApiFormat api_format = ApiFormat::openai;
  /// none, unless api_format is anthropic (then anthropic).
  ReasoningStyle reasoning = ReasoningStyle::none;
  int thinking_budget = 1024;  ///< anthropic: budget_tokens when reasoning (Anthropic's minimum)
  std::string reasoning_effort = "high";     ///< openai: when reasoning
  std::string reasoning_effort_off = "low";  ///< openai: otherwise
  std::chrono::milliseconds connect_timeout{5'000};
  std::chrono::milliseconds timeout{600'000};  ///< the whole exchange; 0 = none
  std::string fallback;                        ///< another model, for connect failures
  std::string ca_file;                         ///< PEM CAs for https (empty: the system's)
};

enum class RouteText { last_user, all_user };

/// `route.conversation`: later turns of a conversation stay on the decision of its earlier ones.
struct ConversationSettings {
  bool enabled = false;
  /// How long a conversation's decision is kept after its last turn.
  std::chrono::milliseconds ttl{1'800'000};
  /// A later turn moves the conversation only when its confidence beats the kept decision's by
  /// more than this (a guard's block always applies).
  double switch_margin = 0.1;
  /// The kept decisions' bound, by bytes of keys and values; the least recently used go first.
  std::size_t max_bytes = 16 * 1024 * 1024;
  /// Request headers that name the conversation, the first present wins; then the body's
  /// metadata.conversation_id or metadata.session_id; else a hash of the system messages and
  /// the first user message (a conversation's stable prefix).
  std::vector<std::string> key_headers{"x-session-id", "x-conversation-id"};
  /// A request header naming the caller (set by a trusted gateway in front, e.g. x-user-id). A
  /// derived key (the stable prefix's hash) is scoped to the caller, so that one caller cannot
  /// steer another's conversation by opening it alike: to this header's value when configured and
  /// present, else to the SHA-256 of the Authorization header, else to the client's address.
  /// Keys named by key_headers or the body's metadata are the client's own and are not scoped.
  std::string caller_header;
  /// "memory" (this process only) or "redis" (also in Redis, so that a fleet keeps a
  /// conversation on its model whichever instance a turn reaches). Default: the semantic
  /// cache's backend when the cache is on, else memory.
  std::string backend_type = "memory";
  /// Default: the semantic cache's address and timeouts, key_prefix "mcpclass:conversation:".
  RedisCacheSettings redis{.key_prefix = "mcpclass:conversation:"};
};
enum class SystemPromptMode { none, insert, replace };

/// `route.admission`: classifications of routed requests running at once and waiting, and what a
/// request gets when its classification is refused (no place, or its X-Request-Timeout-Ms
/// deadline passed before its turn) or fails: `on_refusal: fail_open` forwards it to `model`
/// (default: routing.default_model) with `x-mcpclass-fail-open: <reason>`, `fail_closed` (the
/// default) answers 503 with Retry-After (a failure stays 500). Rules-only routers never wait and
/// are not gated. Plain value.
struct RouteAdmission {
  util::AdmissionOptions limits;  ///< max_concurrent 0: no gate
  bool fail_open = false;
  std::string model;  ///< fail-open's model (resolved to routing.default_model when not given)
};

struct RouteSettings {
  RouteText text = RouteText::last_user;
  /// Request models that are classified and routed ("auto" and aliases).
  std::vector<std::string> routed_models{"auto"};
  SystemPromptMode system_prompt = SystemPromptMode::none;
  /// A decision (routing.decisions) whose jailbreak guard and PII policy also apply to requests
  /// that name a configured model (passed through); empty: those are not guarded.
  std::string passthrough_guard;
  /// Idle keep-alive connections kept per upstream I/O thread.
  std::size_t keep_alive_connections = 32;
  /// I/O threads per upstream model, each with its own keep-alive pool.
  std::size_t upstream_threads = 2;
  /// `route.models`, or the top-level `providers.models` (the Semantic Router's spelling).
  std::map<std::string, RouteUpstream> models;
  ConversationSettings conversation;
  SemanticCacheSettings semantic_cache;
  RouteAdmission admission;

  boost::json::object to_json() const;
  /// Strict: unknown keys, bad types and values throw ConfigError naming `path.key`.
  static RouteSettings from_json(const boost::json::value& v, const std::string& path = "route");
  /// The `route` section (may be null) with the models of the top-level `providers` section (may
  /// be null; the Semantic Router's `providers.models` list, docs/route.md), one of which names
  /// the models. Throws ConfigError naming the key.
  static RouteSettings from_sections(const boost::json::value* route,
                                     const boost::json::value* providers);
  /// Every model the categories and the routing policy can choose has an upstream, and so has
  /// admission's fail-open model. Throws ConfigError.
  void check_against(const classify::CategorySet& categories,
                     const classify::RoutingPolicy& routing,
                     const std::string& path = "route") const;

 private:
  static RouteSettings read(const boost::json::value& v, const std::string& path,
                            const boost::json::value* providers);
};

}  // namespace mcpclass::config
