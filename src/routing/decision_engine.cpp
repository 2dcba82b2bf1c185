#include "mcpclass/routing/decision_engine.hpp"

#include <algorithm>
#include <numeric>

namespace mcpclass::routing {

RuleOutcome evaluate_rule(const RuleNode& node, const SignalLookup& lookup) {
  switch (node.op) {
    case RuleNode::Operator::leaf: {
      const auto v = lookup(node.type, node.name);
      return {v.matched, v.matched ? v.confidence : 0.0};
    }
    case RuleNode::Operator::all: {
      double confidence = 1.0;
      for (const auto& child : node.children) {
        const auto o = evaluate_rule(child, lookup);
        if (!o.matched) return {};
        confidence = std::min(confidence, o.confidence);
      }
      return {true, confidence};
    }
    case RuleNode::Operator::any:
      for (const auto& child : node.children)
        if (const auto o = evaluate_rule(child, lookup); o.matched) return o;
      return {};
    case RuleNode::Operator::none:
      for (const auto& child : node.children)
        if (evaluate_rule(child, lookup).matched) return {};
      return {true, 1.0};
  }
  return {};
}

DecisionChoice choose_decision(const RouterSettings& settings, const SignalLookup& lookup,
                               bool exhaustive) {
  const auto& decisions = settings.decisions;
  std::vector<std::size_t> order(decisions.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return decisions[a].priority > decisions[b].priority;
  });
  const bool all = exhaustive || settings.strategy == DecisionStrategy::confidence;
  DecisionChoice choice;
  for (const auto i : order) {
    DecisionTrace t{decisions[i].name, false, {}};
    if (all || choice.decision == nullptr) {
      t.evaluated = true;
      t.outcome = evaluate_rule(decisions[i].rules, lookup);
      const bool better =
          choice.decision == nullptr || (settings.strategy == DecisionStrategy::confidence &&
                                         t.outcome.confidence > choice.confidence);
      if (t.outcome.matched && better) {
        choice.decision = &decisions[i];
        choice.confidence = t.outcome.confidence;
      }
    }
    choice.trace.push_back(std::move(t));
  }
  return choice;
}

}  // namespace mcpclass::routing
