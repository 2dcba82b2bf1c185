// Internal: the signals of one configuration generation, ready to evaluate (keyword matchers
// compiled, embedding candidates encoded once), and the evaluation of one request, which
// computes each signal (and each model call behind it) at most once, on first use.
#pragma once

#include "mcpclass/routing/decision_engine.hpp"
#include "mcpclass/routing/pii_match.hpp"
#include "mcpclass/routing/router_settings.hpp"
#include "mcpclass/routing/signal_models.hpp"
#include "routing/jailbreak_rules.hpp"

#include <boost/json/object.hpp>

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mcpclass::routing {

class KeywordSignal;
class PiiRecognizers;

/// One computed signal, for headers, metrics and the explanation.
struct SignalReport {
  SignalType type = SignalType::keyword;
  std::string name;
  SignalValue value;
  std::vector<std::string> details;  ///< matched keywords, PII types, domain category, rules
  double seconds = 0.0;
};

/// Thread-safety: immutable after construction; evaluations of it may run concurrently.
class SignalSet {
 public:
  /// Throws ConfigError naming `routing.signals...` when a signal lacks its model (an embedding
  /// signal without an encoder, ...) or a keyword pattern does not compile; ClassifyError when
  /// encoding the candidates fails.
  SignalSet(const SignalSettings& settings, SignalModels models);
  ~SignalSet();
  SignalSet(const SignalSet&) = delete;
  SignalSet& operator=(const SignalSet&) = delete;

  const SignalSettings& settings() const noexcept { return settings_; }
  const SignalModels& models() const noexcept { return models_; }

  /// The PII spans of `text` from `source`, in text order (spans of two sources, or of a model,
  /// may overlap: routing::redact() merges them).
  std::vector<PiiMatch> pii_spans(std::string_view text, PiiSource source) const;

 private:
  friend class SignalEvaluation;
  struct Embedded {
    std::vector<float> candidates;  // candidates × dimension, unit rows
  };
  SignalSettings settings_;
  SignalModels models_;
  std::vector<std::unique_ptr<KeywordSignal>> keywords_;          // as settings_.keywords
  std::vector<Embedded> embedded_;                                // as settings_.embeddings
  std::vector<std::unique_ptr<JailbreakRules>> jailbreak_rules_;  // as settings_.jailbreak
  std::unique_ptr<PiiRecognizers> recognizers_;
  std::unique_ptr<JailbreakRules> default_rules_;  // a jailbreak plugin without a signal
};

/// One request's signals over `text`. Not thread-safe: one thread evaluates a request.
class SignalEvaluation {
 public:
  /// `options` go to every classifier call (its trace context: a remote classifier passes the
  /// request's trace on).
  SignalEvaluation(const SignalSet& set, std::string text, classify::ClassifyOptions options = {});

  const std::string& text() const noexcept { return text_; }
  /// The signal's value, computed on first use. Throws ClassifyError when a model fails.
  SignalValue value(SignalType type, const std::string& name);
  /// The classifier's answer for the text, computed on first use.
  const classify::Classification& classification();
  /// Whether classification() has run (nothing asked for it: no work done).
  bool classified() const noexcept { return classification_.has_value(); }
  /// The jailbreak score of signal `name` (empty: the first jailbreak signal, else the built-in
  /// rules), in [0, 1].
  double jailbreak_score(const std::string& name);
  /// The PII types of the text (after the signal's threshold) that `allowed` does not allow,
  /// with signal `name`'s source and threshold (empty: the first pii signal, else built-in).
  std::vector<PiiMatch> disallowed_pii(const std::string& name,
                                       const std::vector<std::string>& allowed);
  /// The signals computed so far, in the order they were.
  const std::vector<SignalReport>& reports() const noexcept { return reports_; }

 private:
  SignalReport& compute(SignalType type, const std::string& name);
  // The jailbreak signal `name`'s score (and rules), computed once: the signal and a decision's
  // guard read the same one, which may be a classifier call.
  const JailbreakScore& jailbreak(const std::string& name);
  const std::vector<PiiMatch>& spans(PiiSource source);
  const std::vector<float>& embedding();

  const SignalSet& set_;
  std::string text_;
  classify::ClassifyOptions options_;
  std::vector<SignalReport> reports_;
  std::optional<classify::Classification> classification_;
  std::optional<std::vector<float>> embedding_;
  std::map<PiiSource, std::vector<PiiMatch>> spans_;
  std::map<std::string, JailbreakScore> jailbreak_;  // by signal name ("" when none is set)
};

}  // namespace mcpclass::routing
