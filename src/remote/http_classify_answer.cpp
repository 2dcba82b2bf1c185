#include "remote/http_classify_answer.hpp"

#include "mcpclass/remote/remote_classifier.hpp"
#include "util/excerpt.hpp"

#include <fmt/format.h>
#include <boost/json.hpp>

#include <cmath>
#include <optional>

namespace mcpclass::remote::detail {

namespace json = boost::json;

namespace {

[[noreturn]] void invalid(const std::string& message) {
  throw RemoteInvalidResult("invalid http_classify response: " + message);
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

}  // namespace

std::vector<double> http_classify_scores(std::string_view body,
                                         const classify::CategorySet& categories,
                                         const std::map<std::string, std::string>& labels,
                                         const std::string& fallback) {
  boost::system::error_code ec;
  const json::value parsed = json::parse(body, ec);
  if (ec) invalid(fmt::format("not JSON ({}): {}", ec.message(), util::excerpt(body)));
  const json::array* list = parsed.if_array();
  if (list == nullptr) invalid("not a list of {label, score}: " + util::excerpt(body));
  if (list->empty()) invalid("it contained no labels");

  std::vector<double> scores(categories.size(), 0.0);
  std::vector<bool> seen(categories.size(), false);
  std::vector<std::string> got;
  double sum = 0;
  for (const auto& item : *list) {
    const json::object* o = item.if_object();
    const json::value* label = o ? o->if_contains("label") : nullptr;
    const json::value* score = o ? o->if_contains("score") : nullptr;
    if (label == nullptr || !label->is_string() || score == nullptr || !score->is_number())
      invalid("an element is not {\"label\": string, \"score\": number}: " +
              util::excerpt(json::serialize(item)));
    const std::string name(label->get_string());
    const auto mapped = labels.find(name);
    const std::string& category = mapped == labels.end() ? name : mapped->second;
    const std::optional<std::size_t> index = categories.index_of(category);
    if (!index)
      invalid(fmt::format("label '{}' is not a configured category (categories: {})",
                          util::excerpt(name), joined(categories.names())));
    if (seen[*index]) invalid(fmt::format("label '{}' appears twice", name));
    const double p = score->to_number<double>();
    if (!std::isfinite(p) || p < 0 || p > 1)
      invalid(fmt::format("label '{}' has the score {}, not a number within [0, 1]", name, p));
    seen[*index] = true;
    scores[*index] = p;
    sum += p;
    got.push_back(name);
  }

  // The problems of the distribution as a whole, all of them: a server that lies usually
  // breaks several rules at once, and each points at a different bug.
  std::vector<std::string> problems;
  if (got.size() < 2)
    problems.push_back(fmt::format("it has {} label ({}), not a distribution of at least 2",
                                   got.size(), joined(got)));
  std::vector<std::string> missing;
  for (std::size_t i = 0; i < categories.size(); ++i)
    if (!seen[i] && categories[i].name != fallback) missing.push_back(categories[i].name);
  if (!missing.empty())
    problems.push_back(
        fmt::format("it lacks the categories {} (labels: {})", joined(missing), joined(got)));
  if (std::abs(sum - 1.0) > kHttpClassifyScoreTolerance)
    problems.push_back(fmt::format("its scores sum to {:.4g}, not 1 ± {} (labels: {})", sum,
                                   kHttpClassifyScoreTolerance, joined(got)));
  if (!problems.empty()) {
    std::string message;
    for (const auto& p : problems) message += (message.empty() ? "" : "; ") + p;
    invalid(message);
  }
  return scores;
}

}  // namespace mcpclass::remote::detail
