// The semantic router's evaluation of one chat completion request, without I/O: which model,
// which decision, whether a guard blocks it, and the request to forward (docs/route.md). The
// routing proxy forwards what it says; the C ABI and the bindings return it to routers that
// forward themselves, so both give the same answer for the same configuration.
// Thread-safety: a Router is immutable; evaluate() may be called concurrently.
#pragma once

#include "mcpclass/config/config.hpp"
#include "mcpclass/config/route_settings.hpp"
#include "mcpclass/routing/router_settings.hpp"
#include "mcpclass/routing/signal_models.hpp"

#include <boost/json/object.hpp>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mcpclass::route {

using HeaderList = std::vector<std::pair<std::string, std::string>>;

/// The API a request came in (docs/route.md, "Endpoints"): where its text is, how its system
/// prompt and reasoning are written, the shape of its errors, and the api_format of the upstreams
/// it may go to (openai for chat completions and responses, anthropic for messages).
enum class RequestApi {
  chat_completions,  ///< OpenAI POST /v1/chat/completions
  messages,          ///< Anthropic POST /v1/messages
  responses,         ///< OpenAI POST /v1/responses
};

/// One computed signal, as the explanation and the metrics report it.
struct SignalOutcome {
  std::string type;  ///< keyword, embedding, domain, pii, jailbreak
  std::string name;
  bool matched = false;
  double confidence = 0.0;
  std::vector<std::string> details;  ///< matched keywords, PII types, the category, rules
  double seconds = 0.0;
};

/// A conversation's decision, kept for its later turns (route.conversation). Plain value.
struct KeptDecision {
  std::string decision;  ///< empty: the classifier's category chose
  std::string model;
  std::string category;
  double confidence = 0.0;
  bool use_reasoning = false;
};

/// What to do with a request. Plain value.
struct RouteEvaluation {
  enum class Action {
    forward,      ///< send `body` to `model`
    passthrough,  ///< the request named a configured model: forward it as it came
    reject,       ///< answer `status` with `error_body` (bad request, unknown model)
    block,        ///< a guard refused it: `status` 400 with `error_body`
  };
  Action action = Action::reject;
  RequestApi api = RequestApi::chat_completions;
  unsigned status = 200;
  std::string error_body;  ///< in `api`'s error shape
  /// The `route.models` key the request goes to.
  std::string model;
  /// The request to forward, rewritten for `model`'s upstream: model name, reasoning fields,
  /// system prompt, redacted text.
  boost::json::object body;
  /// `body` as `model`'s upstream gets it (upstream_body()), for forward.
  std::string forwarded;
  /// The fallback chain of `model` (route.models.*.fallback, each model once) with the body
  /// each would get, in the order they are tried when the one before cannot be reached.
  std::vector<std::pair<std::string, std::string>> fallbacks;
  bool use_reasoning = false;
  std::string reasoning_effort;  ///< the decision's override, or empty
  std::string lora_name;         ///< sent upstream as the model name, when set
  std::string decision;          ///< the matched decision, empty when none did
  std::string category;          ///< the classifier's category, when it ran
  double confidence = 0.0;
  bool system_prompt_injected = false;
  std::string block_reason;  ///< "jailbreak", "pii"
  /// With a kept decision: "same" (this turn chose it again), "kept" (this turn alone would
  /// have moved, but not by the switch margin), "moved" (it beat the kept one by the margin).
  std::string conversation;
  std::size_t redactions = 0;
  /// For the client: x-vsr-* and x-mcpclass-* decision headers.
  HeaderList response_headers;
  /// For the upstream: the decision's header_mutation (add and update), and the names it deletes.
  HeaderList upstream_headers;
  std::vector<std::string> upstream_headers_removed;
  std::vector<SignalOutcome> signals;
  /// Every decision in ranking order: {name, priority, evaluated, matched, confidence}.
  boost::json::array decisions;

  /// {action, model, decision, category, confidence, use_reasoning, signals, decisions, body,
  /// fallbacks: [{model, body}], headers, ...}: POST /v1/route/explain's answer and the C ABI's.
  boost::json::object to_json() const;
  /// What a conversation keeps of a forwarded evaluation.
  KeptDecision kept() const { return {decision, model, category, confidence, use_reasoning}; }
};

class Router {
 public:
  /// `route` names the upstreams; `routing` the signals and decisions (empty: the classifier's
  /// category picks the model, as before decisions existed). Throws ConfigError naming the key:
  /// a decision's model without an upstream, a signal without its model.
  Router(config::RouteSettings route, routing::RouterSettings routing,
         routing::SignalModels models);
  ~Router();
  Router(const Router&) = delete;
  Router& operator=(const Router&) = delete;

  const config::RouteSettings& route_settings() const noexcept;
  const routing::RouterSettings& router_settings() const noexcept;
  /// Whether evaluate() may run a model (a classifier other than rules, an encoder, a token
  /// classifier): such work belongs off an I/O thread.
  bool slow() const noexcept;
  /// The sentence encoder the embedding signals and the semantic cache use, or null.
  std::shared_ptr<const learned::SentenceEncoder> encoder() const noexcept;

  /// The evaluation of `request` (a parsed body of `api`: a chat completion by default).
  /// `exhaustive`: evaluate every decision and every signal they use (the explanation), not only
  /// until one matches. `max_text_length`: longer prompts are evaluated on their first bytes. Never
  /// throws for a bad request (reject); throws ClassifyError when a model fails. `kept`: the
  /// decision of the request's conversation, which this turn keeps unless its own confidence beats
  /// the kept one's by route.conversation.switch_margin (a guard's block always applies). A model
  /// whose api_format is not `api`'s is rejected (400, naming both). `classify_options` go to
  /// every classifier call (the trace context a remote classifier passes on).
  RouteEvaluation evaluate(boost::json::object request, std::size_t max_text_length,
                           bool exhaustive = false, const KeptDecision* kept = nullptr,
                           RequestApi api = RequestApi::chat_completions,
                           const classify::ClassifyOptions& classify_options = {}) const;

  /// The evaluation without signals or classifier, for a request whose classification was
  /// refused or failed (route.admission's fail-open): a bad request or a configured model named
  /// are answered as evaluate() does; a request to route is forwarded to `model` as written
  /// (its upstream's model name and reasoning default), with `model`'s fallbacks.
  RouteEvaluation unclassified(boost::json::object request, const std::string& model,
                               RequestApi api = RequestApi::chat_completions) const;

  /// `evaluation.body` written for `model`'s upstream (a fallback of the evaluated model keeps
  /// the reasoning decision, in its own family's fields, and drops the LoRA name).
  std::string upstream_body(const RouteEvaluation& evaluation, const std::string& model) const;
  /// upstream_body() before it is serialized (the semantic cache's scope is read from it).
  boost::json::object upstream_request(const RouteEvaluation& evaluation,
                                       const std::string& model) const;

 private:
  struct Impl;
  void write_bodies(RouteEvaluation& out) const;  // forwarded and the fallbacks' bodies
  std::unique_ptr<Impl> impl_;
};

/// The models `config`'s signals need, `classifier` being the configured one (shared, not
/// loaded again): the embedding encoder (`routing.embedding_model`, else the learned
/// classifier's; also for an enabled route.semantic_cache when one of them is configured), the
/// token classifier for model PII sources, jailbreak classifiers; `provenance` is the
/// classifier's when its caller has it (computing one reads the weights' files), else
/// provenance_of(*classifier, 1). Throws ConfigError naming the key, or ClassifyError for a model
/// that does not load.
routing::SignalModels make_signal_models(
    const config::Config& config, std::shared_ptr<const classify::Classifier> classifier,
    std::optional<classify::Provenance> provenance = std::nullopt);

}  // namespace mcpclass::route
