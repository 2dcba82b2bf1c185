// The `route` section: what `mcpclass route` (mcpclass/route/route_proxy.hpp) forwards where.
// docs/route.md describes every key.
// Thread-safety: plain values.
#pragma once

#include "mcpclass/classify/category.hpp"
#include "mcpclass/classify/routing_policy.hpp"
#include "mcpclass/config/semantic_cache_settings.hpp"

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <chrono>
#include <cstddef>
#include <map>
#include <string>
#include <vector>

namespace mcpclass::config {

/// How an upstream family reads the reasoning decision.
enum class ReasoningStyle {
  none,      ///< not written
  openai,    ///< "reasoning_effort"
  vllm,      ///< "chat_template_kwargs": {"enable_thinking": bool} (Qwen3 templates)
  deepseek,  ///< "chat_template_kwargs": {"thinking": bool}
};

/// One model the proxy can send requests to.
struct RouteUpstream {
  std::string base_url;        ///< http:// or https://, e.g. "http://127.0.0.1:8000/v1"
  std::string api_key;         ///< as written: "${NAME}" is resolved when the proxy starts
  std::string upstream_model;  ///< the name sent upstream; empty = the model's key
  ReasoningStyle reasoning = ReasoningStyle::none;
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
};
enum class SystemPromptMode { none, insert, replace };

struct RouteSettings {
  RouteText text = RouteText::last_user;
  /// Request models that are classified and routed ("auto" and aliases).
  std::vector<std::string> routed_models{"auto"};
  SystemPromptMode system_prompt = SystemPromptMode::none;
  /// Idle keep-alive connections kept per upstream I/O thread.
  std::size_t keep_alive_connections = 32;
  /// I/O threads per upstream model, each with its own keep-alive pool.
  std::size_t upstream_threads = 2;
  std::map<std::string, RouteUpstream> models;
  ConversationSettings conversation;
  SemanticCacheSettings semantic_cache;

  boost::json::object to_json() const;
  /// Strict: unknown keys, bad types and values throw ConfigError naming `path.key`.
  static RouteSettings from_json(const boost::json::value& v, const std::string& path = "route");
  /// Every model the categories and the routing policy can choose has an upstream. Throws
  /// ConfigError.
  void check_against(const classify::CategorySet& categories,
                     const classify::RoutingPolicy& routing,
                     const std::string& path = "route") const;
};

}  // namespace mcpclass::config
