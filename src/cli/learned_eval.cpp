#include "cli/learned_eval.hpp"

#include "cli/app.hpp"

#include <fmt/format.h>
#include <boost/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>

namespace mcpclass::cli {

namespace {

// The 8 router groups of the 14 MMLU-Pro categories (models/data/README.md).
std::string router8(const std::string& c) {
  static const std::map<std::string, std::string> groups{
      {"physics", "science"},     {"chemistry", "science"}, {"biology", "science"},
      {"engineering", "science"}, {"business", "business"}, {"economics", "business"},
      {"psychology", "other"},    {"philosophy", "other"},  {"other", "other"}};
  const auto it = groups.find(c);
  return it == groups.end() ? c : it->second;
}

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(q * static_cast<double>(v.size())))];
}

}  // namespace

int run_learned_eval(const config::Config& config,
                     const std::vector<classify::LabelledExample>& rows, const EvalOptions& options,
                     const LearnedEvalProgress& progress) {
  if (rows.empty()) {
    fmt::print(stderr, "mcpclass: no rows to evaluate\n");
    return kUsageError;
  }
  const auto classifier = config::make_classifier(config);
  const auto names = config.categories.names();
  const std::size_t n = names.size();
  std::vector<std::vector<std::size_t>> confusion(n + 1, std::vector<std::size_t>(n, 0));
  std::vector<double> latency_ms;
  std::size_t correct = 0;
  std::size_t group_correct = 0;
  constexpr int kBins = 15;
  std::vector<double> bin_conf(kBins, 0.0), bin_acc(kBins, 0.0), bin_count(kBins, 0.0);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    const auto c = classifier->classify(rows[i].text, {true});
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (latency_ms.size() < options.latency_samples) latency_ms.push_back(ms);
    const auto truth = config.categories.index_of(rows[i].category);
    const bool ok = truth && *truth == c.class_index;
    correct += ok ? 1 : 0;
    group_correct += router8(rows[i].category) == router8(c.category) ? 1 : 0;
    confusion[truth ? *truth : n][c.class_index] += 1;
    const int bin = std::clamp(static_cast<int>(std::ceil(c.confidence * kBins)) - 1, 0, kBins - 1);
    bin_conf[static_cast<std::size_t>(bin)] += c.confidence;
    bin_acc[static_cast<std::size_t>(bin)] += ok ? 1.0 : 0.0;
    bin_count[static_cast<std::size_t>(bin)] += 1.0;
    if (progress) progress(i + 1, rows.size());
  }
  const double total = static_cast<double>(rows.size());
  double ece = 0.0;
  for (int b = 0; b < kBins; ++b) {
    const auto i = static_cast<std::size_t>(b);
    if (bin_count[i] > 0) ece += std::abs(bin_acc[i] - bin_conf[i]) / total;
  }
  const double accuracy = static_cast<double>(correct) / total;
  fmt::print("classifier: {} ({})\nrows: {}\naccuracy: {:.4f}\nECE (15 bins): {:.4f}\n",
             classifier->kind(), boost::json::serialize(classifier->info()), rows.size(), accuracy,
             ece);
  if (options.groups == "router8")
    fmt::print("router8 group accuracy: {:.4f}\n", static_cast<double>(group_correct) / total);
  fmt::print("\n{:<18} {:>9} {:>9} {:>7}\n", "category", "precision", "recall", "rows");
  for (std::size_t c = 0; c < n; ++c) {
    std::size_t predicted = 0;
    std::size_t actual = 0;
    for (std::size_t r = 0; r <= n; ++r) predicted += confusion[r][c];
    for (std::size_t p = 0; p < n; ++p) actual += confusion[c][p];
    fmt::print(
        "{:<18} {:>9.3f} {:>9.3f} {:>7}\n", names[c],
        predicted ? static_cast<double>(confusion[c][c]) / static_cast<double>(predicted) : 0.0,
        actual ? static_cast<double>(confusion[c][c]) / static_cast<double>(actual) : 0.0, actual);
  }
  fmt::print("\nconfusion (rows = truth, columns = predicted, in category order):\n");
  for (std::size_t r = 0; r <= n; ++r) {
    std::size_t row_total = 0;
    for (const auto v : confusion[r]) row_total += v;
    if (r == n && row_total == 0) break;
    fmt::print("{:<18}", r < n ? names[r] : std::string("(unknown)"));
    for (const auto v : confusion[r]) fmt::print(" {:>5}", v);
    fmt::print("\n");
  }
  const double p50 = percentile(latency_ms, 0.5);
  const double p95 = percentile(latency_ms, 0.95);
  fmt::print("\nlatency per query (first {} rows, one at a time): p50 {:.2f} ms, p95 {:.2f} ms\n",
             latency_ms.size(), p50, p95);
  fmt::print("{}\n", boost::json::serialize(boost::json::object{
                         {"rows", rows.size()},
                         {"accuracy", accuracy},
                         {"router8_accuracy", static_cast<double>(group_correct) / total},
                         {"ece", ece},
                         {"latency_p50_ms", p50},
                         {"latency_p95_ms", p95}}));
  return kOk;
}

}  // namespace mcpclass::cli
