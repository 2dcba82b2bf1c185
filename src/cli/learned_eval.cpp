#include "cli/learned_eval.hpp"

#include "cli/app.hpp"
#include "cli/progress_bar.hpp"
#include "mcpclass/classify/routing_policy.hpp"

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

// The shape of a query, for accuracy by shape: what a router sees differs from exam questions.
std::string shape_of(const std::string& source, const std::string& text) {
  if (source.starts_with("mmlu")) return "exam question";
  if (classify::count_words(text) > 60) return "long prompt";
  if (source == "stackexchange") return "title";
  if (source == "medquad") return "question";
  if (source == "clinc150" || source == "banking77") return "request";
  return "other";
}

// Accuracy, router-group accuracy and calibration of one slice of the rows.
struct Tally {
  static constexpr int kBins = 15;
  std::size_t rows = 0;
  std::size_t correct = 0;
  std::size_t group_correct = 0;
  std::size_t low = 0;    // rows the routing policy's low-confidence rule would catch
  std::size_t scope = 0;  // rows its out-of-scope rule would catch (routing.out_of_scope.below)
  std::vector<double> in_scope;  // the classifier's in_scope of each row that has one
  std::vector<double> bin_conf = std::vector<double>(kBins, 0.0);
  std::vector<double> bin_acc = std::vector<double>(kBins, 0.0);
  std::vector<double> bin_count = std::vector<double>(kBins, 0.0);

  void add(bool ok, bool group_ok, const classify::Classification& c, bool low_confidence,
           bool out_of_scope) {
    const double confidence = c.confidence;
    ++rows;
    low += low_confidence ? 1 : 0;
    scope += out_of_scope ? 1 : 0;
    if (c.in_scope) in_scope.push_back(*c.in_scope);
    correct += ok ? 1 : 0;
    group_correct += group_ok ? 1 : 0;
    const auto bin = static_cast<std::size_t>(
        std::clamp(static_cast<int>(std::ceil(confidence * kBins)) - 1, 0, kBins - 1));
    bin_conf[bin] += confidence;
    bin_acc[bin] += ok ? 1.0 : 0.0;
    bin_count[bin] += 1.0;
  }
  double accuracy() const { return rows ? static_cast<double>(correct) / rows : 0.0; }
  double group_accuracy() const { return rows ? static_cast<double>(group_correct) / rows : 0.0; }
  double low_rate() const { return rows ? static_cast<double>(low) / rows : 0.0; }
  double scope_rate() const { return rows ? static_cast<double>(scope) / rows : 0.0; }
  /// Share of the rows with an in_scope below `below` (the rule at another threshold).
  double scope_rate_below(double below) const {
    if (in_scope.empty()) return 0.0;
    const auto n =
        std::count_if(in_scope.begin(), in_scope.end(), [below](double v) { return v < below; });
    return static_cast<double>(n) / static_cast<double>(in_scope.size());
  }
  /// Expected calibration error over 15 equal-width confidence bins.
  double ece() const {
    double e = 0.0;
    for (std::size_t i = 0; i < bin_count.size(); ++i)
      if (bin_count[i] > 0) e += std::abs(bin_acc[i] - bin_conf[i]) / static_cast<double>(rows);
    return e;
  }
  boost::json::object to_json() const {
    return {{"rows", rows},
            {"accuracy", accuracy()},
            {"router8_accuracy", group_accuracy()},
            {"ece", ece()},
            {"low_confidence_rate", low_rate()},
            {"out_of_scope_rate", scope_rate()}};
  }
};

// One line per slice, then (for sources) the worst one: an average hides the shape that fails.
boost::json::object print_slices(const char* title, const std::map<std::string, Tally>& slices,
                                 bool worst) {
  boost::json::object out;
  fmt::print("\n{:<26} {:>7} {:>9} {:>9} {:>7} {:>9} {:>9}\n", title, "rows", "accuracy", "router8",
             "ECE", "low-conf", "out-scope");
  const std::pair<const std::string, Tally>* lowest = nullptr;
  for (const auto& slice : slices) {
    const Tally& t = slice.second;
    fmt::print("{:<26} {:>7} {:>9.4f} {:>9.4f} {:>7.4f} {:>9.4f} {:>9.4f}\n", slice.first, t.rows,
               t.accuracy(), t.group_accuracy(), t.ece(), t.low_rate(), t.scope_rate());
    out[slice.first] = t.to_json();
    if (!lowest || t.group_accuracy() < lowest->second.group_accuracy()) lowest = &slice;
  }
  if (worst && lowest) {
    fmt::print("worst {} by router8 accuracy: {} ({:.4f}; 14-way {:.4f})\n", title, lowest->first,
               lowest->second.group_accuracy(), lowest->second.accuracy());
  }
  return out;
}

// The out-of-scope rule's firing rate per source at other thresholds than the configured one,
// for picking `routing.out_of_scope.below`.
// `in_domain`: each source's rows that are not labelled out of scope (the rule's false alarms).
void print_scope_sweep(const std::map<std::string, Tally>& in_domain,
                       const std::map<std::string, Tally>& out_of_scope) {
  static constexpr double kBelow[] = {0.01, 0.02, 0.05, 0.08, 0.09, 0.095, 0.1, 0.15, 0.2, 0.3};
  fmt::print("\n{:<26}", "in_scope below");
  for (const double b : kBelow) fmt::print(" {:>6}", b);
  fmt::print("\n");
  const auto line = [](const std::string& name, const Tally& t) {
    fmt::print("{:<26}", name);
    for (const double b : kBelow) fmt::print(" {:>6.3f}", t.scope_rate_below(b));
    fmt::print("\n");
  };
  for (const auto& [name, t] : in_domain)
    line(out_of_scope.contains(name) ? name + " in scope" : name, t);
  for (const auto& [name, t] : out_of_scope) line(name + " out of scope", t);
}

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(q * static_cast<double>(v.size())))];
}

}  // namespace

int run_learned_eval(const config::Config& config,
                     const std::vector<learned::LabelledExample>& rows, const EvalOptions& options,
                     const LearnedEvalProgress& progress) {
  if (rows.empty()) {
    fmt::print(stderr, "mcpclass: no rows to evaluate\n");
    return kUsageError;
  }
  const auto classifier =
      config::make_classifier(config, progress_bar("loading", ProgressBar::Units::bytes));
  const auto names = config.categories.names();
  const std::size_t n = names.size();
  std::vector<std::vector<std::size_t>> confusion(n + 1, std::vector<std::size_t>(n, 0));
  std::vector<double> latency_ms;
  Tally all;
  std::map<std::string, Tally> by_source;
  std::map<std::string, Tally> by_shape;
  std::map<std::string, Tally> out_of_scope;  // by source: rows its `label` marks out of scope
  std::map<std::string, Tally> in_domain;     // by source: the other rows
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    const auto c = classifier->classify(rows[i].text, {true});
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (latency_ms.size() < options.latency_samples) latency_ms.push_back(ms);
    const auto truth = config.categories.index_of(rows[i].category);
    const bool ok = truth && *truth == c.class_index;
    const bool group_ok = router8(rows[i].category) == router8(c.category);
    const auto& rule = config.routing.low_confidence;
    const bool low = rule.enabled && c.confidence < rule.below;
    // The out-of-scope rule at its threshold, whether or not the configuration turns it on.
    const bool scope = c.in_scope && *c.in_scope < config.routing.out_of_scope.below;
    all.add(ok, group_ok, c, low, scope);
    by_source[rows[i].source].add(ok, group_ok, c, low, scope);
    // CLINC150's out-of-scope requests: the text the low-confidence and out-of-scope rules are
    // for.
    (rows[i].out_of_scope() ? out_of_scope : in_domain)[rows[i].source].add(ok, group_ok, c, low,
                                                                            scope);
    by_shape[shape_of(rows[i].source, rows[i].text)].add(ok, group_ok, c, low, scope);
    confusion[truth ? *truth : n][c.class_index] += 1;
    if (progress) progress(i + 1, rows.size());
  }
  const double total = static_cast<double>(rows.size());
  const double ece = all.ece();
  const std::size_t group_correct = all.group_correct;
  const double accuracy = all.accuracy();
  fmt::print(
      "classifier: {} ({})\nrows: {}\naccuracy: {:.4f}\nECE (15 bins): {:.4f}\n"
      "low confidence (below routing.low_confidence.below = {}): {:.4f} of the rows\n"
      "out of scope (in_scope below routing.out_of_scope.below = {}): {:.4f} of the rows\n",
      classifier->kind(), boost::json::serialize(classifier->info()), rows.size(), accuracy, ece,
      config.routing.low_confidence.below, all.low_rate(), config.routing.out_of_scope.below,
      all.scope_rate());
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
  const auto sources = print_slices("source", by_source, true);
  const auto shapes = print_slices("shape", by_shape, false);
  const auto scope = out_of_scope.empty() ? boost::json::object()
                                          : print_slices("out of scope", out_of_scope, false);
  if (!all.in_scope.empty()) print_scope_sweep(in_domain, out_of_scope);
  const double p50 = percentile(latency_ms, 0.5);
  const double p95 = percentile(latency_ms, 0.95);
  if (!latency_ms.empty()) {
    fmt::print("\nlatency per query (first {} rows, one at a time): p50 {:.2f} ms, p95 {:.2f} ms\n",
               latency_ms.size(), p50, p95);
  }
  fmt::print("{}\n", boost::json::serialize(boost::json::object{
                         {"rows", rows.size()},
                         {"accuracy", accuracy},
                         {"router8_accuracy", static_cast<double>(group_correct) / total},
                         {"ece", ece},
                         {"low_confidence_rate", all.low_rate()},
                         {"out_of_scope_rate", all.scope_rate()},
                         {"latency_p50_ms", p50},
                         {"latency_p95_ms", p95},
                         {"sources", sources},
                         {"shapes", shapes},
                         {"out_of_scope", scope}}));
  return kOk;
}

}  // namespace mcpclass::cli
