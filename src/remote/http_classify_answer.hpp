// Internal: an http_classify answer checked as the Semantic Router's client checks it
// (pkg/classification/http_classifier.go): a JSON list of `{label, score}`, every label a
// configured category (by name or through `labels`) at most once, every score finite and within
// [0, 1], every category present but the fallback one, and the scores summing to 1 ± 0.02; and,
// as the contract says, at least two labels (a distribution, not a top label).
// Thread-safety: pure; reentrant.
#pragma once

#include "mcpclass/classify/category.hpp"

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace mcpclass::remote::detail {

/// How far the scores may sum from 1 (the router's probabilitySumTolerance).
inline constexpr double kHttpClassifyScoreTolerance = 0.02;

/// The scores of `body` by class index of `categories` (0 for the fallback category when the
/// server does not name it). Throws RemoteInvalidResult naming the label or the problem.
std::vector<double> http_classify_scores(std::string_view body,
                                         const classify::CategorySet& categories,
                                         const std::map<std::string, std::string>& labels,
                                         const std::string& fallback);

}  // namespace mcpclass::remote::detail
