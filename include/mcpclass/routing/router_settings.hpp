// The semantic router's signals and decisions: `routing.signals`, `routing.decisions` and
// `routing.strategy` in the configuration document, in the shapes of the vLLM Semantic Router's
// config.yaml where the concepts are the same (docs/route.md, "Signals and decisions"). Plain
// values; strict readers whose errors name the key.
// Thread-safety: plain values; take_from() and to_json() touch only their arguments.
#pragma once

#include "mcpclass/routing/keyword_signal.hpp"

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mcpclass::routing {

/// Matches when the query's embedding is close enough to its candidate phrases.
struct EmbeddingSignalSettings {
  enum class Aggregation { max, mean, any };
  std::string name;
  double threshold = 0.75;  ///< cosine similarity
  Aggregation aggregation = Aggregation::max;
  std::vector<std::string> candidates;
};

/// Matches when the configured classifier's category is one of `categories` (the Semantic
/// Router's `mmlu_categories`; empty: the category named `name`).
struct DomainSignalSettings {
  std::string name;
  std::string description;
  std::vector<std::string> categories;
  double threshold = 0.0;  ///< the classification's confidence must reach it
};

/// Where PII spans come from.
enum class PiiSource {
  builtin,  ///< the built-in recognizers (no model)
  model,    ///< the `token_classifier` checkpoint
  both,     ///< the union of both
};

/// Matches when the query holds PII of a type not in `allowed` (scored ≥ threshold).
struct PiiSignalSettings {
  std::string name;
  double threshold = 0.5;
  std::vector<std::string> allowed;  ///< `pii_types_allowed`
  PiiSource source = PiiSource::builtin;
};

/// Matches when the jailbreak score reaches `threshold`.
struct JailbreakSignalSettings {
  enum class Method { rules, classifier };
  std::string name;
  double threshold = 0.5;
  Method method = Method::rules;
  /// `method: classifier`: a `classifier` section (any kind) whose category `label` is the
  /// jailbreak class; the config layer builds it.
  boost::json::object classifier;
  std::string label = "jailbreak";
  /// `method: rules`: extra phrases that fire, and phrases that never do.
  std::vector<std::string> patterns;
  std::vector<std::string> benign_patterns;
};

struct SignalSettings {
  std::vector<KeywordSignalSettings> keywords;
  std::vector<EmbeddingSignalSettings> embeddings;
  std::vector<DomainSignalSettings> domains;
  std::vector<PiiSignalSettings> pii;
  std::vector<JailbreakSignalSettings> jailbreak;
};

/// The signal kinds, as rule conditions name them (`type:`).
enum class SignalType { keyword, embedding, domain, pii, jailbreak };
std::string_view to_string(SignalType t);

/// A rule tree: a leaf names a signal; an inner node combines its children.
struct RuleNode {
  enum class Operator { leaf, all, any, none };  ///< leaf, AND, OR, NOT (NOT of several: none)
  Operator op = Operator::leaf;
  SignalType type = SignalType::keyword;  ///< leaf
  std::string name;                       ///< leaf
  std::vector<RuleNode> children;
};

/// One of a decision's models (`modelRefs`); the first is the one requests go to.
struct ModelRef {
  std::string model;
  bool use_reasoning = false;
  std::string reasoning_effort;  ///< overrides the upstream's, when set
  std::string lora_name;         ///< sent upstream as the model name (vLLM serves LoRAs so)
};

struct HeaderMutations {
  std::vector<std::pair<std::string, std::string>> add;
  std::vector<std::pair<std::string, std::string>> update;
  std::vector<std::string> remove;  ///< `delete`
};

enum class PiiAction { block, redact };

struct DecisionSettings {
  std::string name;
  std::string description;
  int priority = 0;
  RuleNode rules;
  std::vector<ModelRef> model_refs;
  /// `system_prompt` plugin.
  std::string system_prompt;
  bool system_prompt_replace = false;  ///< mode replace (default insert)
  HeaderMutations headers;             ///< `header_mutation` plugin: on the upstream request
  /// `jailbreak` plugin: block when the jailbreak signal `signal` (default: the first one, or
  /// the built-in rules) scores ≥ threshold.
  bool jailbreak_enabled = false;
  std::optional<double> jailbreak_threshold;
  std::string jailbreak_signal;
  /// `pii` plugin: PII of a type not in `pii_allowed` is blocked or redacted.
  bool pii_enabled = false;
  std::vector<std::string> pii_allowed;
  PiiAction pii_action = PiiAction::block;
  std::string pii_signal;
  /// `semantic-cache` plugin: this decision's answers are cached (route.semantic_cache) unless
  /// it says enabled: false, with its own threshold and TTL when it gives them.
  bool cache_enabled = true;
  std::optional<double> cache_similarity_threshold;
  std::optional<std::chrono::milliseconds> cache_ttl;
};

enum class DecisionStrategy { priority, confidence };

/// `embedding_model`: the sentence encoder embedding signals use (a sentence-transformers
/// directory, or USE-lite weights with their tokenizer). Absent: the learned classifier's.
struct EmbeddingModelSettings {
  std::string encoder;
  std::string tokenizer;
  std::size_t max_tokens = 128;
  /// 2D Matryoshka (EncoderOptions): layers computed, embedding values kept; 0 = all.
  std::size_t layers = 0;
  std::size_t dimensions = 0;
  /// The prompt's name (EncoderOptions::prompt); empty = the model's default_prompt_name.
  std::string prompt;
};

struct RouterSettings {
  DecisionStrategy strategy = DecisionStrategy::priority;
  SignalSettings signals;
  std::vector<DecisionSettings> decisions;
  std::optional<EmbeddingModelSettings> embedding_model;

  bool empty() const noexcept { return decisions.empty(); }
  /// Reads `strategy`, `signals`, `decisions` and `embedding_model` of the `routing` object and
  /// removes them from it (the rest is the classifier's routing policy). Throws ConfigError naming
  /// `path.key`: unknown keys, a condition naming no signal, duplicate names, a decision without
  /// modelRefs.
  static RouterSettings take_from(boost::json::object& routing,
                                  const std::string& path = "routing");
  /// Writes them back into `routing`.
  void to_json(boost::json::object& routing) const;
  /// Every signal a decision's rules or plugins use, as "type:name".
  std::vector<std::string> used_signals() const;
};

}  // namespace mcpclass::routing
