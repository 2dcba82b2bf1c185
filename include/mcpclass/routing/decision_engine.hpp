// Choosing a decision: each decision's rule tree evaluated over signal values that are computed
// on first use, so a signal no evaluated condition reads is never computed. Pure: the caller
// supplies the signals.
// Thread-safety: free functions over plain values; `lookup` is called on the calling thread.
#pragma once

#include "mcpclass/routing/router_settings.hpp"

#include <boost/json/object.hpp>

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace mcpclass::routing {

/// One signal's value for one request.
struct SignalValue {
  bool matched = false;
  double confidence = 0.0;  ///< in [0, 1]
};

/// A rule tree's outcome. AND: matched when every condition is, confidence their minimum; OR:
/// the first matching condition's (later ones are not evaluated); NOT: matched when no
/// condition is, confidence 1.
struct RuleOutcome {
  bool matched = false;
  double confidence = 0.0;
};

using SignalLookup = std::function<SignalValue(SignalType, const std::string& name)>;

RuleOutcome evaluate_rule(const RuleNode& node, const SignalLookup& lookup);

/// What happened to one decision.
struct DecisionTrace {
  std::string name;
  bool evaluated = false;  ///< false: a decision ranked before it was chosen first
  RuleOutcome outcome;
};

struct DecisionChoice {
  const DecisionSettings* decision = nullptr;  ///< null: none matched
  double confidence = 0.0;
  std::vector<DecisionTrace> trace;  ///< every decision, in ranking order
};

/// priority: decisions by descending priority (ties in configuration order), the first that
/// matches wins and the rest are not evaluated unless `exhaustive`. confidence: every decision
/// is evaluated; the matching one of highest confidence wins (ties: priority, then order).
DecisionChoice choose_decision(const RouterSettings& settings, const SignalLookup& lookup,
                               bool exhaustive = false);

}  // namespace mcpclass::routing
