// The evaluation in the order of the Semantic Router's request flow: parse → signals → decision
// → jailbreak guard → PII policy → model, reasoning and system prompt. Signals are computed on
// first use, so a signal that no evaluated condition or guard reads costs nothing.
#include "mcpclass/route/router.hpp"

#include "mcpclass/routing/decision_engine.hpp"
#include "mcpclass/routing/pii_recognizers.hpp"
#include "route/chat_request.hpp"
#include "route/request_api.hpp"
#include "routing/signal_set.hpp"

#include <fmt/format.h>
#include <boost/json.hpp>

#include <algorithm>
#include <cctype>
#include <optional>
#include <set>

namespace mcpclass::route {

namespace json = boost::json;
using routing::SignalType;

namespace {

// Names and categories come from the configuration; a header value never holds a line break.
std::string header_value(std::string_view s) {
  std::string out(s);
  std::replace_if(
      out.begin(), out.end(), [](char c) { return c == '\r' || c == '\n'; }, ' ');
  return out;
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ",") + header_value(n);
  return out;
}

RouteEvaluation rejected(RequestApi api, unsigned status, std::string_view message,
                         std::string_view code, std::string_view param = {}) {
  RouteEvaluation e;
  e.action = RouteEvaluation::Action::reject;
  e.api = api;
  e.status = status;
  e.error_body = api_error(api, status, message, "invalid_request_error", code, param);
  return e;
}

template <class List>
const auto* find_named(const List& list, std::string_view name) {
  for (const auto& s : list)
    if (s.name == name) return &s;
  return name.empty() && !list.empty() ? &list.front() : nullptr;
}

// How the guards read a request's texts: in pieces of the classifier's text bound, with the
// request's classify options (a remote jailbreak classifier passes the trace on).
struct GuardReading {
  std::size_t piece_bytes = 0;
  classify::ClassifyOptions options;
};

}  // namespace

struct Router::Impl {
  config::RouteSettings route;
  routing::RouterSettings router;
  std::unique_ptr<routing::SignalSet> signals;
  bool slow = false;

  const config::RouteUpstream* upstream(std::string_view model) const {
    const auto it = route.models.find(std::string(model));
    return it == route.models.end() ? nullptr : &it->second;
  }

  // A model whose upstream speaks another API than the request's: the proxy does not translate
  // between APIs, so the client is told where that model is served.
  std::optional<RouteEvaluation> wrong_format(const std::string& model, RequestApi api) const {
    const auto format = upstream(model)->api_format;
    if (format == upstream_format(api)) return std::nullopt;
    const auto served = format == config::ApiFormat::anthropic ? RequestApi::messages
                                                               : RequestApi::chat_completions;
    return rejected(api, 400,
                    fmt::format("The model '{}' has api_format {} (route.models.{}.api_format): "
                                "this proxy does not translate between APIs, and {} serves only "
                                "api_format {} models; send the request to {}",
                                model, config::to_string(format), model, path_of(api),
                                config::to_string(upstream_format(api)), path_of(served)),
                    "wrong_api_format");
  }

  // What is decided before any signal: a bad request (reject), a configured model named
  // (passthrough); nullopt for a request to route.
  std::optional<RouteEvaluation> screen(json::object& request, RequestApi api) const {
    if (auto problem = missing_input(request, api))
      return rejected(api, 400, *problem, "invalid_request");
    const auto* model_value = request.if_contains("model");
    if (model_value != nullptr && !model_value->is_string())
      return rejected(api, 400, "'model' must be a string", "invalid_request");
    const std::string model = model_value ? std::string(model_value->get_string()) : "auto";
    if (!routed(model)) {
      if (upstream(model) == nullptr)
        return rejected(
            api, 404,
            fmt::format("The model '{}' does not exist: GET /v1/models lists the models", model),
            "model_not_found");
      if (auto e = wrong_format(model, api)) return e;
      RouteEvaluation e;
      e.action = RouteEvaluation::Action::passthrough;
      e.api = api;
      e.model = model;
      e.body = std::move(request);
      return e;
    }
    if (auto e = check_request(request, api))
      return rejected(api, 400, e->message, "invalid_request", e->param);
    return std::nullopt;
  }

  bool routed(std::string_view model) const {
    return std::find(route.routed_models.begin(), route.routed_models.end(), model) !=
           route.routed_models.end();
  }

  // The classifier's category picks the model and reasoning: no decisions configured, or none
  // matched.
  void by_category(routing::SignalEvaluation& ev, RouteEvaluation& out) const {
    const auto& c = ev.classification();
    category_route({"", c.model, c.category, c.confidence, c.use_reasoning}, out);
  }

  // A category's model, reasoning and (as route.system_prompt says) system prompt.
  void category_route(const KeptDecision& chosen, RouteEvaluation& out) const {
    const auto* category = signals->models().classifier->categories().find(chosen.category);
    out.system_prompt_injected = apply_system_prompt(
        out.body, out.api, category ? category->system_prompt : std::string(), route.system_prompt);
    out.model = chosen.model;
    out.use_reasoning = chosen.use_reasoning;
    out.category = chosen.category;
    out.confidence = chosen.confidence;
  }

  // `check` on the signals' own text (already evaluated), then on each piece of every text the
  // guards read, each a text of its own to the signals, until it returns true. A guard that read
  // only the classified text would pass what follows filler, an earlier turn or a system message.
  template <class Check>
  void each_guarded(routing::SignalEvaluation& ev, const RouteEvaluation& out,
                    const GuardReading& reading, Check&& check) const {
    if (check(ev)) return;
    for (const auto text : guarded_texts(out.body, out.api))
      for (const auto piece : text_pieces(text, reading.piece_bytes)) {
        if (piece == ev.text()) continue;
        routing::SignalEvaluation other(*signals, std::string(piece), reading.options);
        if (check(other)) return;
      }
  }

  // The decision's guards; true when one blocks the request.
  bool guard(const routing::DecisionSettings& d, routing::SignalEvaluation& ev,
             const GuardReading& reading, RouteEvaluation& out) const {
    const auto& sig = router.signals;
    if (d.jailbreak_enabled) {
      const auto* j = find_named(sig.jailbreak, d.jailbreak_signal);
      const double threshold = d.jailbreak_threshold ? *d.jailbreak_threshold
                               : j                   ? j->threshold
                                                     : 0.5;
      double score = 0;
      each_guarded(ev, out, reading, [&](routing::SignalEvaluation& e) {
        score = std::max(score, e.jailbreak_score(d.jailbreak_signal));
        return score >= threshold;
      });
      if (score >= threshold) {
        out.action = RouteEvaluation::Action::block;
        out.status = 400;
        out.block_reason = "jailbreak";
        out.response_headers.emplace_back("x-vsr-matched-jailbreak", j ? j->name : "builtin");
        out.error_body = api_error(
            out.api, 400,
            fmt::format("The request was blocked: it looks like a jailbreak attempt (score {:.2f} "
                        ">= {:.2f}, decision '{}')",
                        score, threshold, d.name),
            "invalid_request_error", "jailbreak_detected");
        return true;
      }
    }
    if (d.pii_enabled) {
      std::vector<routing::PiiMatch> found;
      each_guarded(ev, out, reading, [&](routing::SignalEvaluation& e) {
        const auto more = e.disallowed_pii(d.pii_signal, d.pii_allowed);
        found.insert(found.end(), more.begin(), more.end());
        return !found.empty() && d.pii_action == routing::PiiAction::block;
      });
      if (!found.empty()) {
        std::set<std::string> types;
        for (const auto& m : found) types.insert(m.type);
        const std::vector<std::string> list(types.begin(), types.end());
        out.response_headers.emplace_back("x-mcpclass-pii-types", joined(list));
        if (d.pii_action == routing::PiiAction::block) {
          out.action = RouteEvaluation::Action::block;
          out.status = 400;
          out.block_reason = "pii";
          out.error_body = api_error(
              out.api, 400,
              fmt::format("The request was blocked: it contains personal data the decision '{}' "
                          "does not allow ({})",
                          d.name, fmt::join(list, ", ")),
              "invalid_request_error", "pii_detected");
          return true;
        }
      }
      if (d.pii_action == routing::PiiAction::redact) redact(d, out);
    }
    return false;
  }

  // The disallowed PII of every text the guards read (each whole: the recognizers are linear
  // and a token classifier reads long texts in windows) replaced by its type, before it leaves
  // the proxy.
  void redact(const routing::DecisionSettings& d, RouteEvaluation& out) const {
    const auto* p = find_named(router.signals.pii, d.pii_signal);
    const auto source = p ? p->source : routing::PiiSource::builtin;
    const double threshold = p ? p->threshold : 0.0;
    out.redactions += rewrite_guarded_text(
        out.body,
        [&](std::string_view text) {
          std::vector<routing::PiiMatch> spans;
          for (auto& m : signals->pii_spans(text, source))
            if (m.score >= threshold && std::find(d.pii_allowed.begin(), d.pii_allowed.end(),
                                                  m.type) == d.pii_allowed.end())
              spans.push_back(std::move(m));
          return spans.empty() ? std::string(text) : routing::redact(text, spans);
        },
        out.api);
  }

  // route.passthrough_guard: a request that names its model still meets that decision's
  // jailbreak guard and PII policy; a redaction is forwarded re-serialized (the body changed).
  void guard_passthrough(RouteEvaluation& e, const GuardReading& reading) const {
    const auto* d = find_named(router.decisions, route.passthrough_guard);
    if (d == nullptr) return;  // the configuration checks the name when it loads
    routing::SignalEvaluation ev(
        *signals,
        std::string(utf8_prefix(prompt_text(e.body, route.text, e.api), reading.piece_bytes)),
        reading.options);
    const auto model = e.model;
    if (guard(*d, ev, reading, e)) {
      e.decision = d->name;
      e.response_headers.emplace_back("x-vsr-response-path", "blocked");
      return;
    }
    if (e.redactions == 0) return;
    json::object body = e.body;
    const auto& name = upstream(model)->upstream_model;
    body["model"] = name.empty() ? model : name;
    e.forwarded = json::serialize(body);
  }

  void by_decision(const routing::DecisionSettings& d, double confidence,
                   RouteEvaluation& out) const {
    const auto& ref = d.model_refs.front();
    out.decision = d.name;
    out.model = ref.model;
    out.use_reasoning = ref.use_reasoning;
    out.reasoning_effort = ref.reasoning_effort;
    out.lora_name = ref.lora_name;
    out.confidence = confidence;
    out.system_prompt_injected =
        apply_system_prompt(out.body, out.api, d.system_prompt,
                            d.system_prompt_replace ? config::SystemPromptMode::replace
                                                    : config::SystemPromptMode::insert);
    out.upstream_headers = d.headers.add;
    out.upstream_headers.insert(out.upstream_headers.end(), d.headers.update.begin(),
                                d.headers.update.end());
    out.upstream_headers_removed = d.headers.remove;
  }

  // A later turn of a conversation: it stays on the kept decision unless it beats it by the
  // switch margin. Staying redoes the rewrite from the request as it came.
  void conversation(const KeptDecision& kept, routing::SignalEvaluation& ev,
                    const GuardReading& reading, json::object original,
                    RouteEvaluation& out) const {
    if (out.model == kept.model && out.decision == kept.decision) {
      out.conversation = "same";
      return;
    }
    if (out.confidence > kept.confidence + route.conversation.switch_margin) {
      out.conversation = "moved";
      return;
    }
    const auto* d = kept.decision.empty() ? nullptr : find_named(router.decisions, kept.decision);
    // A reload may have removed what the conversation was kept on.
    if ((!kept.decision.empty() && d == nullptr) || upstream(kept.model) == nullptr) {
      out.conversation = "moved";
      return;
    }
    RouteEvaluation stay;
    stay.action = RouteEvaluation::Action::forward;
    stay.api = out.api;
    stay.body = std::move(original);
    stay.decisions = std::move(out.decisions);
    stay.response_headers = std::move(out.response_headers);
    if (d != nullptr) {
      if (!guard(*d, ev, reading, stay)) by_decision(*d, kept.confidence, stay);
    } else {
      category_route(kept, stay);  // the classifier's category chose it
    }
    stay.conversation = "kept";
    out = std::move(stay);
  }

  // What produced the category (classify::Provenance), as x-mcpclass-* headers.
  void provenance_headers(const classify::Classification& c, RouteEvaluation& out) const {
    for (auto [name, value] : signals->models().provenance.of(c).headers()) {
      std::transform(name.begin(), name.end(), name.begin(),
                     [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
      out.response_headers.emplace_back(std::move(name), std::move(value));
    }
  }

  void headers(const routing::SignalEvaluation& ev, RouteEvaluation& out) const {
    auto& h = out.response_headers;
    std::vector<std::string> matched[5];
    for (const auto& r : ev.reports())
      if (r.value.matched) matched[static_cast<int>(r.type)].push_back(r.name);
    static constexpr const char* kNames[5] = {"x-vsr-matched-keywords", "x-vsr-matched-embeddings",
                                              "x-vsr-matched-domains", "x-vsr-matched-pii",
                                              "x-vsr-matched-jailbreak"};
    for (int t = 0; t < 5; ++t) {
      const bool present =
          std::any_of(h.begin(), h.end(), [&](const auto& kv) { return kv.first == kNames[t]; });
      if (!matched[t].empty() && !present) h.emplace_back(kNames[t], joined(matched[t]));
    }
    if (!out.decision.empty())
      h.emplace_back("x-vsr-selected-decision", header_value(out.decision));
    if (!out.category.empty()) {
      h.emplace_back("x-vsr-selected-category", header_value(out.category));
      h.emplace_back("x-mcpclass-category", header_value(out.category));
    }
    if (out.action == RouteEvaluation::Action::block) {
      h.emplace_back("x-vsr-response-path", "blocked");
      return;
    }
    h.emplace_back("x-vsr-selected-model", header_value(out.model));
    h.emplace_back("x-vsr-selected-reasoning", out.use_reasoning ? "on" : "off");
    h.emplace_back("x-vsr-selected-confidence", fmt::format("{:.4f}", out.confidence));
    h.emplace_back("x-vsr-injected-system-prompt", out.system_prompt_injected ? "true" : "false");
    if (!out.conversation.empty()) h.emplace_back("x-mcpclass-conversation", out.conversation);
    h.emplace_back("x-mcpclass-reasoning", out.use_reasoning ? "true" : "false");
    h.emplace_back("x-mcpclass-confidence", fmt::format("{:.6f}", out.confidence));
  }
};

Router::Router(config::RouteSettings route, routing::RouterSettings router,
               routing::SignalModels models)
    : impl_(std::make_unique<Impl>()) {
  if (!models.classifier) throw std::invalid_argument("Router: no classifier");
  impl_->slow = models.classifier->kind() != "rules" || models.encoder || models.pii_model ||
                !models.jailbreak.empty();
  impl_->signals = std::make_unique<routing::SignalSet>(router.signals, std::move(models));
  impl_->route = std::move(route);
  impl_->router = std::move(router);
}

Router::~Router() = default;

const config::RouteSettings& Router::route_settings() const noexcept {
  return impl_->route;
}
const routing::RouterSettings& Router::router_settings() const noexcept {
  return impl_->router;
}
bool Router::slow() const noexcept {
  return impl_->slow;
}
std::shared_ptr<const learned::SentenceEncoder> Router::encoder() const noexcept {
  return impl_->signals->models().encoder;
}

RouteEvaluation Router::evaluate(json::object request, std::size_t max_text_length, bool exhaustive,
                                 const KeptDecision* kept, RequestApi api,
                                 const classify::ClassifyOptions& classify_options) const {
  const auto& impl = *impl_;
  const GuardReading reading{max_text_length, classify_options};
  if (auto e = impl.screen(request, api)) {
    if (e->action == RouteEvaluation::Action::passthrough && !impl.route.passthrough_guard.empty())
      impl.guard_passthrough(*e, reading);
    return std::move(*e);
  }

  RouteEvaluation out;
  out.action = RouteEvaluation::Action::forward;
  out.api = api;
  json::object original;  // the request before this turn's rewrite, for a kept decision's
  if (kept != nullptr) original = request;
  out.body = std::move(request);
  routing::SignalEvaluation ev(
      *impl.signals,
      std::string(utf8_prefix(prompt_text(out.body, impl.route.text, api), max_text_length)),
      classify_options);
  const auto choice = routing::choose_decision(
      impl.router, [&](SignalType type, const std::string& name) { return ev.value(type, name); },
      exhaustive);
  for (const auto& t : choice.trace) {
    const auto* d = find_named(impl.router.decisions, t.name);
    out.decisions.push_back(json::object{{"name", t.name},
                                         {"priority", d ? d->priority : 0},
                                         {"evaluated", t.evaluated},
                                         {"matched", t.outcome.matched},
                                         {"confidence", t.outcome.confidence}});
  }
  if (choice.decision == nullptr) {
    impl.by_category(ev, out);
  } else if (!impl.guard(*choice.decision, ev, reading, out)) {
    impl.by_decision(*choice.decision, choice.confidence, out);
  } else {
    out.decision = choice.decision->name;
  }
  if (kept != nullptr && out.action == RouteEvaluation::Action::forward)
    impl.conversation(*kept, ev, reading, std::move(original), out);
  // A domain signal ran the classifier: its category is reported too.
  if (out.category.empty() &&
      std::any_of(ev.reports().begin(), ev.reports().end(),
                  [](const auto& r) { return r.type == SignalType::domain; }))
    out.category = ev.classification().category;
  impl.headers(ev, out);
  if (ev.classified()) impl.provenance_headers(ev.classification(), out);
  for (const auto& r : ev.reports())
    out.signals.push_back({std::string(routing::to_string(r.type)), r.name, r.value.matched,
                           r.value.confidence, r.details, r.seconds});
  if (out.action == RouteEvaluation::Action::forward && impl.upstream(out.model) == nullptr) {
    // The configuration checks this when it loads; a classifier may still name any model.
    auto e = rejected(api, 500, fmt::format("No upstream for model '{}' (route.models)", out.model),
                      "no_upstream");
    e.response_headers = std::move(out.response_headers);
    return e;
  }
  if (out.action == RouteEvaluation::Action::forward) {
    if (auto e = impl.wrong_format(out.model, api)) {
      e->response_headers = std::move(out.response_headers);
      return std::move(*e);
    }
  }
  if (out.action == RouteEvaluation::Action::forward) write_bodies(out);
  return out;
}

RouteEvaluation Router::unclassified(json::object request, const std::string& model,
                                     RequestApi api) const {
  const auto& impl = *impl_;
  if (auto e = impl.screen(request, api)) return std::move(*e);
  if (impl.upstream(model) == nullptr)
    return rejected(api, 500, fmt::format("No upstream for model '{}' (route.models)", model),
                    "no_upstream");
  if (auto e = impl.wrong_format(model, api)) return std::move(*e);
  RouteEvaluation out;
  out.action = RouteEvaluation::Action::forward;
  out.api = api;
  out.model = model;
  out.body = std::move(request);
  write_bodies(out);
  return out;
}

void Router::write_bodies(RouteEvaluation& out) const {
  out.forwarded = upstream_body(out, out.model);
  std::set<std::string> seen{out.model};
  for (const auto* u = impl_->upstream(out.model);
       u && !u->fallback.empty() && seen.insert(u->fallback).second;
       u = impl_->upstream(u->fallback))
    out.fallbacks.emplace_back(u->fallback, upstream_body(out, u->fallback));
}

std::string Router::upstream_body(const RouteEvaluation& evaluation,
                                  const std::string& model) const {
  if (impl_->upstream(model) == nullptr) return {};
  return json::serialize(upstream_request(evaluation, model));
}

json::object Router::upstream_request(const RouteEvaluation& evaluation,
                                      const std::string& model) const {
  const auto* u = impl_->upstream(model);
  if (u == nullptr) return {};
  json::object out = evaluation.body;
  const bool primary = model == evaluation.model;
  if (primary && !evaluation.lora_name.empty())
    out["model"] = evaluation.lora_name;
  else
    out["model"] = u->upstream_model.empty() ? model : u->upstream_model;
  if (primary && !evaluation.reasoning_effort.empty()) {
    auto family = *u;
    family.reasoning_effort = evaluation.reasoning_effort;
    write_reasoning(out, evaluation.api, family, evaluation.use_reasoning);
  } else {
    write_reasoning(out, evaluation.api, *u, evaluation.use_reasoning);
  }
  return out;
}

json::object RouteEvaluation::to_json() const {
  static constexpr const char* kActions[] = {"forward", "passthrough", "reject", "block"};
  json::array sig;
  for (const auto& s : signals)
    sig.push_back(json::object{{"type", s.type},
                               {"name", s.name},
                               {"matched", s.matched},
                               {"confidence", s.confidence},
                               {"details", json::array(s.details.begin(), s.details.end())},
                               {"seconds", s.seconds}});
  json::object headers_json;
  for (const auto& [k, v] : response_headers) headers_json[k] = v;
  json::object upstream_json;
  for (const auto& [k, v] : upstream_headers) upstream_json[k] = v;
  json::object out{{"action", kActions[static_cast<int>(action)]},
                   {"model", model},
                   {"decision", decision},
                   {"category", category},
                   {"confidence", confidence},
                   {"use_reasoning", use_reasoning},
                   {"signals", std::move(sig)},
                   {"decisions", decisions},
                   {"headers", std::move(headers_json)},
                   {"upstream_headers", std::move(upstream_json)},
                   {"upstream_headers_removed",
                    json::array(upstream_headers_removed.begin(), upstream_headers_removed.end())},
                   {"redactions", redactions}};
  if (!lora_name.empty()) out["lora_name"] = lora_name;
  if (!reasoning_effort.empty()) out["reasoning_effort"] = reasoning_effort;
  if (action == Action::block) out["block_reason"] = block_reason;
  if (!conversation.empty()) out["conversation"] = conversation;
  if (!forwarded.empty()) out["body"] = json::parse(forwarded);
  if (!fallbacks.empty()) {
    json::array chain;
    for (const auto& [model, body] : fallbacks)
      chain.push_back(json::object{{"model", model}, {"body", json::parse(body)}});
    out["fallbacks"] = std::move(chain);
  }
  if (action == Action::reject || action == Action::block) {
    out["status"] = status;
    out["error"] = json::parse(error_body);
  }
  return out;
}

}  // namespace mcpclass::route
