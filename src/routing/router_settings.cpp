#include "mcpclass/routing/router_settings.hpp"

#include "routing/jailbreak_rules.hpp"
#include "util/config_reader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <set>
#include <utility>

namespace mcpclass::routing {

namespace json = boost::json;
namespace strict = util::strict;

namespace {

constexpr std::array<std::pair<const char*, SignalType>, 5> kTypes{{
    {"keyword", SignalType::keyword},
    {"embedding", SignalType::embedding},
    {"domain", SignalType::domain},
    {"pii", SignalType::pii},
    {"jailbreak", SignalType::jailbreak},
}};
constexpr std::array<std::pair<const char*, RuleNode::Operator>, 3> kOperators{{
    {"AND", RuleNode::Operator::all},
    {"OR", RuleNode::Operator::any},
    {"NOT", RuleNode::Operator::none},
}};
constexpr std::array<std::pair<const char*, EmbeddingSignalSettings::Aggregation>, 3> kAggregations{
    {
        {"max", EmbeddingSignalSettings::Aggregation::max},
        {"mean", EmbeddingSignalSettings::Aggregation::mean},
        {"any", EmbeddingSignalSettings::Aggregation::any},
    }};
constexpr std::array<std::pair<const char*, PiiSource>, 3> kPiiSources{{
    {"builtin", PiiSource::builtin},
    {"model", PiiSource::model},
    {"both", PiiSource::both},
}};
constexpr std::array<std::pair<const char*, JailbreakSignalSettings::Method>, 2> kMethods{{
    {"rules", JailbreakSignalSettings::Method::rules},
    {"classifier", JailbreakSignalSettings::Method::classifier},
}};
constexpr std::array<std::pair<const char*, PiiAction>, 2> kPiiActions{{
    {"block", PiiAction::block},
    {"redact", PiiAction::redact},
}};
constexpr std::array<std::pair<const char*, DecisionStrategy>, 2> kStrategies{{
    {"priority", DecisionStrategy::priority},
    {"confidence", DecisionStrategy::confidence},
}};

std::string required_name(strict::ObjectReader& r) {
  auto name = strict::as_string(r.required("name"), r.path_of("name"));
  if (name.empty()) strict::fail(r.path_of("name"), "must not be empty");
  return name;
}

double unit_interval(strict::ObjectReader& r, std::string_view key, double fallback) {
  const auto v = r.number(key);
  if (!v) return fallback;
  if (!(*v >= 0.0 && *v <= 1.0)) strict::fail(r.path_of(key), "must be in [0, 1]");
  return *v;
}

// Reads each object of the list at `key` with `read`.
template <class T, class Read>
std::vector<T> read_list(strict::ObjectReader& r, std::string_view key, Read read) {
  std::vector<T> out;
  const auto* v = r.get(key);
  if (v == nullptr) return out;
  const auto path = r.path_of(key);
  const auto& list = strict::as_array(*v, path);
  for (std::size_t i = 0; i < list.size(); ++i)
    out.push_back(read(list[i], strict::index_path(path, i)));
  // Conditions name signals: a name used twice would be ambiguous.
  std::set<std::string, std::less<>> names;
  for (std::size_t i = 0; i < out.size(); ++i)
    if (!names.insert(out[i].name).second)
      strict::fail(strict::member_path(strict::index_path(path, i), "name"),
                   fmt::format("'{}' is already the name of another entry", out[i].name));
  return out;
}

EmbeddingSignalSettings read_embedding(const json::value& v, const std::string& path) {
  strict::ObjectReader r(v, path);
  EmbeddingSignalSettings s;
  s.name = required_name(r);
  s.threshold = unit_interval(r, "threshold", s.threshold);
  if (auto a = r.string("aggregation_method"))
    s.aggregation = strict::parse_enum(*a, kAggregations, r.path_of("aggregation_method"));
  s.candidates = strict::as_string_list(r.required("candidates"), r.path_of("candidates"));
  if (s.candidates.empty()) strict::fail(r.path_of("candidates"), "must list at least one phrase");
  r.finish();
  return s;
}

DomainSignalSettings read_domain(const json::value& v, const std::string& path) {
  strict::ObjectReader r(v, path);
  DomainSignalSettings s;
  s.name = required_name(r);
  s.description = r.string("description").value_or("");
  s.categories = r.string_list("mmlu_categories").value_or(std::vector<std::string>{});
  s.threshold = unit_interval(r, "threshold", s.threshold);
  r.finish();
  return s;
}

PiiSignalSettings read_pii(const json::value& v, const std::string& path) {
  strict::ObjectReader r(v, path);
  PiiSignalSettings s;
  s.name = required_name(r);
  s.threshold = unit_interval(r, "threshold", s.threshold);
  s.allowed = r.string_list("pii_types_allowed").value_or(std::vector<std::string>{});
  if (auto src = r.string("source"))
    s.source = strict::parse_enum(*src, kPiiSources, r.path_of("source"));
  r.string("description");
  r.finish();
  return s;
}

JailbreakSignalSettings read_jailbreak(const json::value& v, const std::string& path) {
  strict::ObjectReader r(v, path);
  JailbreakSignalSettings s;
  s.name = required_name(r);
  s.threshold = unit_interval(r, "threshold", s.threshold);
  if (auto m = r.string("method")) s.method = strict::parse_enum(*m, kMethods, r.path_of("method"));
  if (const auto* c = r.get("classifier")) {
    if (s.method != JailbreakSignalSettings::Method::classifier)
      strict::fail(r.path_of("classifier"), "only with method: classifier");
    s.classifier = strict::as_object(*c, r.path_of("classifier"));
  } else if (s.method == JailbreakSignalSettings::Method::classifier) {
    strict::fail(r.path_of("classifier"), "method: classifier needs a classifier section");
  }
  if (auto l = r.string("label")) s.label = *l;
  s.patterns = r.string_list("jailbreak_patterns").value_or(std::vector<std::string>{});
  s.benign_patterns = r.string_list("benign_patterns").value_or(std::vector<std::string>{});
  r.string("description");
  r.finish();
  return s;
}

RuleNode read_rule(const json::value& v, const std::string& path, std::size_t depth) {
  if (depth > 32) strict::fail(path, "rules nest more than 32 levels deep");
  strict::ObjectReader r(v, path);
  RuleNode node;
  if (const auto* op = r.get("operator")) {
    node.op = strict::parse_enum(strict::as_string(*op, r.path_of("operator")), kOperators,
                                 r.path_of("operator"));
    const auto cpath = r.path_of("conditions");
    const auto& list = strict::as_array(r.required("conditions"), cpath);
    if (list.empty()) strict::fail(cpath, "must hold at least one condition");
    for (std::size_t i = 0; i < list.size(); ++i)
      node.children.push_back(read_rule(list[i], strict::index_path(cpath, i), depth + 1));
  } else {
    node.type = strict::parse_enum(strict::as_string(r.required("type"), r.path_of("type")), kTypes,
                                   r.path_of("type"));
    node.name = required_name(r);
  }
  r.finish();
  return node;
}

ModelRef read_model_ref(const json::value& v, const std::string& path) {
  strict::ObjectReader r(v, path);
  ModelRef m;
  m.model = strict::as_string(r.required("model"), r.path_of("model"));
  if (m.model.empty()) strict::fail(r.path_of("model"), "must not be empty");
  m.use_reasoning = r.boolean("use_reasoning").value_or(false);
  m.reasoning_effort = r.string("reasoning_effort").value_or("");
  m.lora_name = r.string("lora_name").value_or("");
  r.finish();
  return m;
}

std::vector<std::pair<std::string, std::string>> read_headers(strict::ObjectReader& r,
                                                              std::string_view key) {
  std::vector<std::pair<std::string, std::string>> out;
  const auto* v = r.get(key);
  if (v == nullptr) return out;
  const auto path = r.path_of(key);
  const auto& list = strict::as_array(*v, path);
  for (std::size_t i = 0; i < list.size(); ++i) {
    strict::ObjectReader h(list[i], strict::index_path(path, i));
    auto name = strict::as_string(h.required("name"), h.path_of("name"));
    if (name.empty() || name.find_first_of(": \r\n") != std::string::npos)
      strict::fail(h.path_of("name"), fmt::format("'{}' is not a header name", name));
    auto value = strict::as_string(h.required("value"), h.path_of("value"));
    if (value.find_first_of("\r\n") != std::string::npos)
      strict::fail(h.path_of("value"), "a header value holds no line break");
    h.finish();
    out.emplace_back(std::move(name), std::move(value));
  }
  return out;
}

void read_plugin(const json::value& v, const std::string& path, DecisionSettings& d) {
  strict::ObjectReader r(v, path);
  const auto type = strict::as_string(r.required("type"), r.path_of("type"));
  const auto* conf = r.get("configuration");
  r.finish();
  const json::value empty = json::object{};
  strict::ObjectReader c(conf ? *conf : empty, strict::member_path(path, "configuration"));
  const bool enabled = c.boolean("enabled").value_or(true);
  if (type == "system_prompt") {
    const auto prompt = c.string("system_prompt").value_or("");
    if (auto mode = c.string("mode")) {
      if (*mode != "insert" && *mode != "replace")
        strict::fail(c.path_of("mode"), fmt::format("'{}' is not one of insert, replace", *mode));
      d.system_prompt_replace = *mode == "replace";
    }
    if (enabled) d.system_prompt = prompt;
  } else if (type == "header_mutation") {
    HeaderMutations m;
    m.add = read_headers(c, "add");
    m.update = read_headers(c, "update");
    m.remove = c.string_list("delete").value_or(std::vector<std::string>{});
    if (enabled) d.headers = std::move(m);
  } else if (type == "jailbreak") {
    d.jailbreak_enabled = enabled;
    if (c.get("threshold")) d.jailbreak_threshold = unit_interval(c, "threshold", 0.0);
    d.jailbreak_signal = c.string("signal").value_or("");
  } else if (type == "pii") {
    d.pii_enabled = enabled;
    d.pii_allowed = c.string_list("pii_types_allowed").value_or(std::vector<std::string>{});
    if (auto a = c.string("action"))
      d.pii_action = strict::parse_enum(*a, kPiiActions, c.path_of("action"));
    d.pii_signal = c.string("signal").value_or("");
  } else if (type == "semantic-cache") {
    d.cache_enabled = enabled;
    if (c.get("similarity_threshold"))
      d.cache_similarity_threshold = unit_interval(c, "similarity_threshold", 0.0);
    if (auto t = c.seconds("ttl_seconds", false)) d.cache_ttl = *t;
  } else {
    strict::fail(r.path_of("type"),
                 fmt::format("'{}' is not one of system_prompt, header_mutation, jailbreak, pii, "
                             "semantic-cache",
                             type));
  }
  c.finish();
}

DecisionSettings read_decision(const json::value& v, const std::string& path) {
  strict::ObjectReader r(v, path);
  DecisionSettings d;
  d.name = required_name(r);
  d.description = r.string("description").value_or("");
  if (auto p = r.integer("priority")) {
    if (*p < -1'000'000 || *p > 1'000'000)
      strict::fail(r.path_of("priority"), "must be in [-1000000, 1000000]");
    d.priority = static_cast<int>(*p);
  }
  d.rules = read_rule(r.required("rules"), r.path_of("rules"), 0);
  const auto mpath = r.path_of("modelRefs");
  const auto& refs = strict::as_array(r.required("modelRefs"), mpath);
  if (refs.empty()) strict::fail(mpath, "must name at least one model");
  for (std::size_t i = 0; i < refs.size(); ++i)
    d.model_refs.push_back(read_model_ref(refs[i], strict::index_path(mpath, i)));
  if (const auto* plugins = r.get("plugins")) {
    const auto ppath = r.path_of("plugins");
    const auto& list = strict::as_array(*plugins, ppath);
    for (std::size_t i = 0; i < list.size(); ++i)
      read_plugin(list[i], strict::index_path(ppath, i), d);
  }
  r.finish();
  return d;
}

template <class List>
bool has_name(const List& list, std::string_view name) {
  return std::any_of(list.begin(), list.end(), [&](const auto& s) { return s.name == name; });
}

bool signal_exists(const SignalSettings& s, SignalType type, std::string_view name) {
  switch (type) {
    case SignalType::keyword:
      return has_name(s.keywords, name);
    case SignalType::embedding:
      return has_name(s.embeddings, name);
    case SignalType::domain:
      return has_name(s.domains, name);
    case SignalType::pii:
      return has_name(s.pii, name);
    case SignalType::jailbreak:
      return has_name(s.jailbreak, name);
  }
  return false;
}

void check_rule(const RuleNode& node, const SignalSettings& signals, const std::string& path) {
  if (node.op != RuleNode::Operator::leaf) {
    for (std::size_t i = 0; i < node.children.size(); ++i)
      check_rule(node.children[i], signals,
                 strict::index_path(strict::member_path(path, "conditions"), i));
    return;
  }
  if (!signal_exists(signals, node.type, node.name))
    strict::fail(strict::member_path(path, "name"),
                 fmt::format("no {} signal is named '{}' (routing.signals)", to_string(node.type),
                             node.name));
}

void collect(const RuleNode& node, std::vector<std::string>& out) {
  if (node.op == RuleNode::Operator::leaf)
    out.push_back(fmt::format("{}:{}", to_string(node.type), node.name));
  for (const auto& child : node.children) collect(child, out);
}

json::object rule_to_json(const RuleNode& node) {
  if (node.op == RuleNode::Operator::leaf)
    return json::object{{"type", to_string(node.type)}, {"name", node.name}};
  json::array conditions;
  for (const auto& child : node.children) conditions.push_back(rule_to_json(child));
  return json::object{{"operator", strict::enum_name(node.op, kOperators)},
                      {"conditions", std::move(conditions)}};
}

json::array headers_to_json(const std::vector<std::pair<std::string, std::string>>& headers) {
  json::array out;
  for (const auto& [name, value] : headers)
    out.push_back(json::object{{"name", name}, {"value", value}});
  return out;
}

json::object decision_to_json(const DecisionSettings& d) {
  json::array refs;
  for (const auto& m : d.model_refs) {
    json::object o{{"model", m.model}, {"use_reasoning", m.use_reasoning}};
    if (!m.reasoning_effort.empty()) o["reasoning_effort"] = m.reasoning_effort;
    if (!m.lora_name.empty()) o["lora_name"] = m.lora_name;
    refs.push_back(std::move(o));
  }
  json::array plugins;
  if (!d.system_prompt.empty())
    plugins.push_back(json::object{{"type", "system_prompt"},
                                   {"configuration",
                                    {{"system_prompt", d.system_prompt},
                                     {"mode", d.system_prompt_replace ? "replace" : "insert"}}}});
  if (!d.headers.add.empty() || !d.headers.update.empty() || !d.headers.remove.empty()) {
    json::array remove(d.headers.remove.begin(), d.headers.remove.end());
    plugins.push_back(json::object{{"type", "header_mutation"},
                                   {"configuration",
                                    {{"add", headers_to_json(d.headers.add)},
                                     {"update", headers_to_json(d.headers.update)},
                                     {"delete", std::move(remove)}}}});
  }
  if (d.jailbreak_enabled) {
    json::object c{{"enabled", true}};
    if (d.jailbreak_threshold) c["threshold"] = *d.jailbreak_threshold;
    if (!d.jailbreak_signal.empty()) c["signal"] = d.jailbreak_signal;
    plugins.push_back(json::object{{"type", "jailbreak"}, {"configuration", std::move(c)}});
  }
  if (d.pii_enabled) {
    json::object c{{"enabled", true},
                   {"pii_types_allowed", json::array(d.pii_allowed.begin(), d.pii_allowed.end())},
                   {"action", strict::enum_name(d.pii_action, kPiiActions)}};
    if (!d.pii_signal.empty()) c["signal"] = d.pii_signal;
    plugins.push_back(json::object{{"type", "pii"}, {"configuration", std::move(c)}});
  }
  if (!d.cache_enabled || d.cache_similarity_threshold || d.cache_ttl) {
    json::object c{{"enabled", d.cache_enabled}};
    if (d.cache_similarity_threshold) c["similarity_threshold"] = *d.cache_similarity_threshold;
    if (d.cache_ttl) c["ttl_seconds"] = static_cast<double>(d.cache_ttl->count()) / 1000;
    plugins.push_back(json::object{{"type", "semantic-cache"}, {"configuration", std::move(c)}});
  }
  json::object out{{"name", d.name},
                   {"priority", d.priority},
                   {"rules", rule_to_json(d.rules)},
                   {"modelRefs", std::move(refs)}};
  if (!d.description.empty()) out["description"] = d.description;
  if (!plugins.empty()) out["plugins"] = std::move(plugins);
  return out;
}

json::array strings(const std::vector<std::string>& list) {
  return json::array(list.begin(), list.end());
}

}  // namespace

std::string_view to_string(SignalType t) {
  return strict::enum_name(t, kTypes);
}

RouterSettings RouterSettings::take_from(json::object& routing, const std::string& path) {
  RouterSettings s;
  json::object mine;
  for (const auto* key : {"strategy", "signals", "decisions", "embedding_model"}) {
    if (auto it = routing.find(key); it != routing.end()) {
      mine[key] = it->value();
      routing.erase(it);
    }
  }
  strict::ObjectReader r(mine, path);
  if (auto st = r.string("strategy"))
    s.strategy = strict::parse_enum(*st, kStrategies, r.path_of("strategy"));
  if (const auto* signals = r.get("signals")) {
    strict::ObjectReader sr(*signals, r.path_of("signals"));
    s.signals.keywords = read_list<KeywordSignalSettings>(
        sr, "keywords", [](const json::value& v, const std::string& p) {
          return KeywordSignalSettings::from_json(v, p);
        });
    s.signals.embeddings = read_list<EmbeddingSignalSettings>(sr, "embeddings", read_embedding);
    s.signals.domains = read_list<DomainSignalSettings>(sr, "domains", read_domain);
    s.signals.pii = read_list<PiiSignalSettings>(sr, "pii", read_pii);
    s.signals.jailbreak = read_list<JailbreakSignalSettings>(sr, "jailbreak", read_jailbreak);
    sr.finish();
  }
  // Patterns compile now, so a bad one is reported when the configuration loads.
  for (std::size_t i = 0; i < s.signals.keywords.size(); ++i)
    KeywordSignal(s.signals.keywords[i],
                  strict::index_path(strict::member_path(r.path_of("signals"), "keywords"), i));
  for (std::size_t i = 0; i < s.signals.jailbreak.size(); ++i)
    JailbreakRules(s.signals.jailbreak[i].patterns, s.signals.jailbreak[i].benign_patterns,
                   strict::index_path(strict::member_path(r.path_of("signals"), "jailbreak"), i));
  s.decisions = read_list<DecisionSettings>(r, "decisions", read_decision);
  if (const auto* e = r.get("embedding_model")) {
    strict::ObjectReader er(*e, r.path_of("embedding_model"));
    EmbeddingModelSettings m;
    m.encoder = strict::as_string(er.required("encoder"), er.path_of("encoder"));
    m.tokenizer = er.string("tokenizer").value_or("");
    m.max_tokens = er.count("max_tokens", 1, 8192).value_or(m.max_tokens);
    m.layers = er.count("layers", 1, 1000).value_or(0);
    m.dimensions = er.count("dimensions", 1, 65'536).value_or(0);
    m.prompt = er.string("prompt").value_or("");
    er.finish();
    s.embedding_model = std::move(m);
  }
  r.finish();
  const auto dpath = strict::member_path(path, "decisions");
  for (std::size_t i = 0; i < s.decisions.size(); ++i) {
    const auto& d = s.decisions[i];
    const auto at = strict::index_path(dpath, i);
    check_rule(d.rules, s.signals, strict::member_path(at, "rules"));
    if (!d.jailbreak_signal.empty() && !has_name(s.signals.jailbreak, d.jailbreak_signal))
      strict::fail(
          strict::member_path(at, "plugins"),
          fmt::format("the jailbreak plugin names no jailbreak signal '{}'", d.jailbreak_signal));
    if (!d.pii_signal.empty() && !has_name(s.signals.pii, d.pii_signal))
      strict::fail(strict::member_path(at, "plugins"),
                   fmt::format("the pii plugin names no pii signal '{}'", d.pii_signal));
  }
  return s;
}

void RouterSettings::to_json(json::object& routing) const {
  if (embedding_model) {
    json::object m{{"encoder", embedding_model->encoder},
                   {"tokenizer", embedding_model->tokenizer},
                   {"max_tokens", embedding_model->max_tokens}};
    if (embedding_model->layers != 0) m["layers"] = embedding_model->layers;
    if (embedding_model->dimensions != 0) m["dimensions"] = embedding_model->dimensions;
    if (!embedding_model->prompt.empty()) m["prompt"] = embedding_model->prompt;
    routing["embedding_model"] = std::move(m);
  }
  if (decisions.empty() && signals.keywords.empty() && signals.embeddings.empty() &&
      signals.domains.empty() && signals.pii.empty() && signals.jailbreak.empty())
    return;
  routing["strategy"] = strict::enum_name(strategy, kStrategies);
  json::object sig;
  json::array list;
  for (const auto& k : signals.keywords) list.push_back(k.to_json());
  sig["keywords"] = std::move(list);
  list = {};
  for (const auto& e : signals.embeddings)
    list.push_back(
        json::object{{"name", e.name},
                     {"threshold", e.threshold},
                     {"aggregation_method", strict::enum_name(e.aggregation, kAggregations)},
                     {"candidates", strings(e.candidates)}});
  sig["embeddings"] = std::move(list);
  list = {};
  for (const auto& d : signals.domains)
    list.push_back(json::object{{"name", d.name},
                                {"description", d.description},
                                {"mmlu_categories", strings(d.categories)},
                                {"threshold", d.threshold}});
  sig["domains"] = std::move(list);
  list = {};
  for (const auto& p : signals.pii)
    list.push_back(json::object{{"name", p.name},
                                {"threshold", p.threshold},
                                {"pii_types_allowed", strings(p.allowed)},
                                {"source", strict::enum_name(p.source, kPiiSources)}});
  sig["pii"] = std::move(list);
  list = {};
  for (const auto& j : signals.jailbreak) {
    json::object o{{"name", j.name},
                   {"threshold", j.threshold},
                   {"method", strict::enum_name(j.method, kMethods)},
                   {"jailbreak_patterns", strings(j.patterns)},
                   {"benign_patterns", strings(j.benign_patterns)}};
    if (j.method == JailbreakSignalSettings::Method::classifier) {
      o["classifier"] = j.classifier;
      o["label"] = j.label;
    }
    list.push_back(std::move(o));
  }
  sig["jailbreak"] = std::move(list);
  routing["signals"] = std::move(sig);
  list = {};
  for (const auto& d : decisions) list.push_back(decision_to_json(d));
  routing["decisions"] = std::move(list);
}

std::vector<std::string> RouterSettings::used_signals() const {
  std::vector<std::string> out;
  for (const auto& d : decisions) collect(d.rules, out);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace mcpclass::routing
