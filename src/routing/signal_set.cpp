#include "routing/signal_set.hpp"

#include "mcpclass/routing/keyword_signal.hpp"
#include "mcpclass/routing/pii_recognizers.hpp"
#include "util/config_reader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <set>

namespace mcpclass::routing {

namespace strict = util::strict;
using Clock = std::chrono::steady_clock;

namespace {

template <class List>
std::size_t index_of(const List& list, std::string_view name) {
  for (std::size_t i = 0; i < list.size(); ++i)
    if (list[i].name == name) return i;
  return list.size();
}

std::string signal_path(std::string_view kind, std::size_t i) {
  return strict::index_path(strict::member_path("routing.signals", kind), i);
}

// Spans in text order, whatever order their source reported them in (a span tool may group
// them by label). Overlaps are kept: the policy filters by type and score first, and redact()
// merges what is left, so a span of an allowed type never shields one of another.
std::vector<PiiMatch> in_text_order(std::vector<PiiMatch> spans) {
  std::stable_sort(spans.begin(), spans.end(), [](const auto& x, const auto& y) {
    return x.begin != y.begin ? x.begin < y.begin : x.end > y.end;
  });
  return spans;
}

// A token-classification model's labels are the PII types ("EMAIL_ADDRESS", or the BIO tags'
// entity groups): its spans are PII spans.
std::vector<PiiMatch> model_spans(const learned::TokenClassifier& model, std::string_view text) {
  std::vector<PiiMatch> out;
  for (auto& s : model.detect(text))
    out.push_back({std::move(s.label), s.byte_start, s.byte_end, s.score});
  return out;
}

}  // namespace

SignalSet::SignalSet(const SignalSettings& settings, SignalModels models)
    : settings_(settings),
      models_(std::move(models)),
      recognizers_(std::make_unique<PiiRecognizers>()),
      default_rules_(std::make_unique<JailbreakRules>()) {
  for (const auto& k : settings_.keywords)
    keywords_.push_back(
        std::make_unique<KeywordSignal>(k, signal_path("keywords", keywords_.size())));
  for (std::size_t i = 0; i < settings_.jailbreak.size(); ++i) {
    const auto& j = settings_.jailbreak[i];
    jailbreak_rules_.push_back(std::make_unique<JailbreakRules>(j.patterns, j.benign_patterns,
                                                                signal_path("jailbreak", i)));
    if (j.method == JailbreakSignalSettings::Method::classifier) {
      const auto it = models_.jailbreak.find(j.name);
      if (it == models_.jailbreak.end() || !it->second)
        strict::fail(strict::member_path(signal_path("jailbreak", i), "classifier"),
                     "the classifier was not built");
      if (!it->second->categories().find(j.label))
        strict::fail(strict::member_path(signal_path("jailbreak", i), "label"),
                     fmt::format("the classifier has no category '{}'", j.label));
    }
  }
  for (std::size_t i = 0; i < settings_.pii.size(); ++i)
    if (settings_.pii[i].source != PiiSource::builtin && !models_.pii_model)
      strict::fail(strict::member_path(signal_path("pii", i), "source"),
                   "a model source needs the token_classifier section");
  for (std::size_t i = 0; i < settings_.domains.size(); ++i) {
    const auto& d = settings_.domains[i];
    if (!models_.classifier) strict::fail(signal_path("domains", i), "no classifier");
    const auto& names = d.categories.empty() ? std::vector<std::string>{d.name} : d.categories;
    for (const auto& c : names)
      if (!models_.classifier->categories().find(c))
        strict::fail(strict::member_path(signal_path("domains", i),
                                         d.categories.empty() ? "name" : "mmlu_categories"),
                     fmt::format("the classifier has no category '{}'", c));
  }
  if (!settings_.embeddings.empty() && !models_.encoder)
    strict::fail(signal_path("embeddings", 0),
                 "embedding signals need an encoder: routing.embedding_model, or a learned "
                 "classifier (embedding_knn, trained_head) whose encoder they share");
  for (const auto& e : settings_.embeddings)
    embedded_.push_back({models_.encoder->encode(e.candidates)});
}

SignalSet::~SignalSet() = default;

std::vector<PiiMatch> SignalSet::pii_spans(std::string_view text, PiiSource source) const {
  switch (source) {
    case PiiSource::builtin:
      return recognizers_->find(text);
    case PiiSource::model:
      return in_text_order(model_spans(*models_.pii_model, text));
    case PiiSource::both: {
      auto spans = recognizers_->find(text);
      const auto model = model_spans(*models_.pii_model, text);
      spans.insert(spans.end(), model.begin(), model.end());
      return in_text_order(std::move(spans));
    }
  }
  return {};
}

SignalEvaluation::SignalEvaluation(const SignalSet& set, std::string text,
                                   classify::ClassifyOptions options)
    : set_(set), text_(std::move(text)), options_(options) {}

SignalValue SignalEvaluation::value(SignalType type, const std::string& name) {
  for (const auto& r : reports_)
    if (r.type == type && r.name == name) return r.value;
  return compute(type, name).value;
}

const classify::Classification& SignalEvaluation::classification() {
  if (!classification_) classification_ = set_.models_.classifier->classify(text_, options_);
  return *classification_;
}

const std::vector<PiiMatch>& SignalEvaluation::spans(PiiSource source) {
  auto it = spans_.find(source);
  if (it == spans_.end()) it = spans_.emplace(source, set_.pii_spans(text_, source)).first;
  return it->second;
}

const std::vector<float>& SignalEvaluation::embedding() {
  if (!embedding_)
    embedding_ = set_.models_.encoder->encode(std::span<const std::string>(&text_, 1));
  return *embedding_;
}

double SignalEvaluation::jailbreak_score(const std::string& name) {
  return jailbreak(name).score;
}

const JailbreakScore& SignalEvaluation::jailbreak(const std::string& name) {
  const auto& list = set_.settings_.jailbreak;
  const std::string key = list.empty() ? std::string() : name.empty() ? list.front().name : name;
  if (const auto it = jailbreak_.find(key); it != jailbreak_.end()) return it->second;
  JailbreakScore out;
  if (list.empty()) {
    out = set_.default_rules_->score(text_);
  } else {
    const std::size_t i = index_of(list, key);
    const auto& j = list[i];
    if (j.method == JailbreakSignalSettings::Method::rules) {
      out = set_.jailbreak_rules_[i]->score(text_);
    } else {
      const auto& classifier = *set_.models_.jailbreak.find(j.name)->second;
      const auto c = classifier.classify(text_, options_);
      const auto& categories = classifier.categories();
      out.score = c.category == j.label ? c.confidence : 1.0 - c.confidence;
      for (std::size_t k = 0; k < categories.size() && k < c.probabilities.size(); ++k)
        if (categories[k].name == j.label) out.score = c.probabilities[k];
    }
  }
  return jailbreak_.emplace(key, std::move(out)).first->second;
}

std::vector<PiiMatch> SignalEvaluation::disallowed_pii(const std::string& name,
                                                       const std::vector<std::string>& allowed) {
  const auto& list = set_.settings_.pii;
  PiiSource source = PiiSource::builtin;
  double threshold = 0.0;
  if (!list.empty()) {
    const auto& p = list[name.empty() ? 0 : index_of(list, name)];
    source = p.source;
    threshold = p.threshold;
  }
  std::vector<PiiMatch> out;
  for (const auto& m : spans(source))
    if (m.score >= threshold && std::find(allowed.begin(), allowed.end(), m.type) == allowed.end())
      out.push_back(m);
  return out;
}

SignalReport& SignalEvaluation::compute(SignalType type, const std::string& name) {
  const auto t0 = Clock::now();
  SignalReport r{type, name, {}, {}, 0.0};
  const auto& s = set_.settings_;
  switch (type) {
    case SignalType::keyword: {
      const auto i = index_of(s.keywords, name);
      auto result = set_.keywords_[i]->evaluate(text_);
      r.value = {result.matched, result.matched ? std::max(result.score, 0.0) : 0.0};
      if (result.matched && r.value.confidence == 0.0) r.value.confidence = 1.0;
      r.details = std::move(result.keywords);
      break;
    }
    case SignalType::embedding: {
      const auto i = index_of(s.embeddings, name);
      const auto& e = s.embeddings[i];
      const auto& q = embedding();
      const auto& m = set_.embedded_[i].candidates;
      const std::size_t dim = q.size();
      double best = -1.0, sum = 0.0;
      for (std::size_t c = 0; c < e.candidates.size(); ++c) {
        const double sim = std::inner_product(q.begin(), q.end(), m.begin() + c * dim, 0.0);
        sum += sim;
        if (sim > best) {
          best = sim;
          if (!r.details.empty()) r.details.clear();
          r.details.push_back(e.candidates[c]);
        }
      }
      const double score = e.aggregation == EmbeddingSignalSettings::Aggregation::mean
                               ? sum / e.candidates.size()
                               : best;
      r.value = {score >= e.threshold, std::clamp(score, 0.0, 1.0)};
      if (!r.value.matched) r.details.clear();
      break;
    }
    case SignalType::domain: {
      const auto& d = s.domains[index_of(s.domains, name)];
      const auto& c = classification();
      const auto& names = d.categories.empty() ? std::vector<std::string>{d.name} : d.categories;
      const bool in = std::find(names.begin(), names.end(), c.category) != names.end();
      r.value = {in && c.confidence >= d.threshold, c.confidence};
      r.details = {c.category};
      break;
    }
    case SignalType::pii: {
      const auto& p = s.pii[index_of(s.pii, name)];
      const auto found = disallowed_pii(name, p.allowed);
      std::set<std::string> types;
      double best = 0.0;
      for (const auto& m : found) {
        types.insert(m.type);
        best = std::max(best, m.score);
      }
      r.value = {!found.empty(), best};
      r.details.assign(types.begin(), types.end());
      break;
    }
    case SignalType::jailbreak: {
      const auto& j = s.jailbreak[index_of(s.jailbreak, name)];
      const auto& score = jailbreak(name);
      r.value = {score.score >= j.threshold, score.score};
      if (r.value.matched) r.details = score.rules;
      break;
    }
  }
  r.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  reports_.push_back(std::move(r));
  return reports_.back();
}

}  // namespace mcpclass::routing
