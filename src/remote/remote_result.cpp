// Reading and validating what a remote classification server returns.
#include "remote/remote_detail.hpp"

#include "mcpclass/classify/entropy.hpp"
#include "mcpclass/util/json_fields.hpp"

#include <fmt/format.h>

#include <cmath>
#include <numeric>
#include <optional>
#include <vector>

namespace mcpclass::remote::detail {

namespace {

[[noreturn]] void invalid(const std::string& message) {
  throw RemoteInvalidResult("invalid result: " + message);
}

std::string text_of(const json::object& result) {
  const auto* content = result.if_contains("content");
  if (content == nullptr || !content->is_array() || content->get_array().empty()) return {};
  const auto& first = content->get_array().front();
  if (!first.is_object()) return {};
  return util::string_or_empty(first.get_object(), "text");
}

double number(const json::value& v, const std::string& what) {
  if (v.is_double()) return v.get_double();
  if (v.is_int64()) return static_cast<double>(v.get_int64());
  if (v.is_uint64()) return static_cast<double>(v.get_uint64());
  invalid(what + " is not a number");
}

}  // namespace

json::object tool_payload(const json::object& result, std::string_view tool) {
  const auto* is_error = result.if_contains("isError");
  if (is_error != nullptr && is_error->is_bool() && is_error->get_bool())
    throw RemoteProtocolError(fmt::format("{} failed: {}", tool, text_of(result)));
  if (const auto* s = result.if_contains("structuredContent"); s != nullptr && s->is_object())
    return s->get_object();
  const std::string text = text_of(result);
  if (text.empty()) invalid(fmt::format("{}: no text content", tool));
  boost::system::error_code ec;
  json::value v = json::parse(text, ec);
  if (ec || !v.is_object()) invalid(fmt::format("{}: content[0].text is not a JSON object", tool));
  // The reference servers report failures as {"error": ...} with isError:false.
  if (const auto* e = v.get_object().if_contains("error");
      e != nullptr && v.get_object().size() == 1)
    throw RemoteProtocolError(
        fmt::format("{} failed: {}", tool,
                    e->is_string() ? std::string(e->get_string()) : json::serialize(*e)));
  return v.get_object();
}

std::vector<classify::RerankScore> parse_rerank_scores(const json::object& payload,
                                                       std::size_t documents) {
  const auto* results = payload.if_contains("results");
  if (results == nullptr || !results->is_array()) invalid("rerank: results is not a list");
  if (results->get_array().size() != documents)
    invalid(
        fmt::format("rerank: {} results for {} documents", results->get_array().size(), documents));
  std::vector<std::optional<double>> scores(documents);
  for (const auto& r : results->get_array()) {
    const auto* o = r.if_object();
    const auto* index = o != nullptr ? o->if_contains("index") : nullptr;
    const auto* score = o != nullptr ? o->if_contains("relevance_score") : nullptr;
    if (index == nullptr || !index->is_int64() || index->get_int64() < 0 ||
        static_cast<std::size_t>(index->get_int64()) >= documents || score == nullptr)
      invalid("rerank: a result without an index among the documents and a relevance_score");
    auto& slot = scores[static_cast<std::size_t>(index->get_int64())];
    if (slot) invalid(fmt::format("rerank: document {} ranked twice", index->get_int64()));
    slot = number(*score, "rerank: relevance_score");
    if (!std::isfinite(*slot)) invalid("rerank: relevance_score is not finite");
  }
  std::vector<classify::RerankScore> out;
  out.reserve(documents);
  for (const auto& s : scores) out.push_back({*s, *s});
  return out;
}

classify::CategorySet parse_categories(const json::object& payload, const std::string& fallback,
                                       std::optional<std::size_t> expected,
                                       std::size_t& remote_count) {
  const auto* names = payload.if_contains("categories");
  if (names == nullptr || !names->is_array() || names->get_array().empty())
    invalid("list_categories: no non-empty 'categories' array");
  auto text_map = [&](std::string_view key) {
    const auto* m = payload.if_contains(key);
    return m != nullptr && m->is_object() ? m->get_object() : json::object{};
  };
  const json::object prompts = text_map("category_system_prompts");
  const json::object descriptions = text_map("category_descriptions");
  std::vector<classify::Category> categories;
  for (const auto& n : names->get_array()) {
    if (!n.is_string()) invalid("list_categories: a category name is not a string");
    classify::Category c;
    c.name = n.get_string();
    c.description = util::string_or_empty(descriptions, c.name);
    c.system_prompt = util::string_or_empty(prompts, c.name);
    categories.push_back(std::move(c));
  }
  remote_count = categories.size();
  if (expected && *expected != remote_count)
    throw RemoteProtocolError(fmt::format(
        "the server offers {} categories, num_categories expects {}", remote_count, *expected));
  const bool has_fallback =
      std::any_of(categories.begin(), categories.end(),
                  [&](const classify::Category& c) { return c.name == fallback; });
  if (!fallback.empty() && !has_fallback) {
    classify::Category c;
    c.name = fallback;
    c.description = "Fallback for results below the confidence threshold";
    categories.push_back(std::move(c));
  }
  try {
    return classify::CategorySet(std::move(categories));
  } catch (const classify::ConfigError& e) {
    invalid(std::string("list_categories: ") + e.what());
  }
}

classify::Classification parse_classification(const json::object& payload,
                                              const classify::CategorySet& categories,
                                              std::size_t remote_count, double threshold,
                                              const std::string& fallback) {
  for (const auto& e : classify::router_validation_errors(payload, remote_count)) invalid(e);
  const auto* cls = payload.if_contains("class");
  const auto* confidence = payload.if_contains("confidence");
  if (cls == nullptr || confidence == nullptr) invalid("'class' and 'confidence' are required");
  const double class_value = number(*cls, "class");
  if (class_value != std::floor(class_value) || class_value < 0 ||
      class_value >= static_cast<double>(remote_count))
    invalid(fmt::format("class {} outside [0, {})", class_value, remote_count));

  classify::Classification c;
  c.class_index = static_cast<std::size_t>(class_value);
  c.confidence = number(*confidence, "confidence");
  if (!std::isfinite(c.confidence) || c.confidence < 0 || c.confidence > 1)
    invalid("confidence outside [0, 1]");
  if (const auto* m = payload.if_contains("model"); m != nullptr && m->is_string())
    c.model = m->get_string();
  if (const auto* r = payload.if_contains("use_reasoning"); r != nullptr) {
    if (!r->is_bool()) invalid("use_reasoning is not a boolean");
    c.use_reasoning = r->get_bool();
  }
  if (const auto* in_scope = payload.if_contains("in_scope"); in_scope != nullptr) {
    c.in_scope = number(*in_scope, "in_scope");  // a remote learned head's out-of-scope score
    if (!std::isfinite(*c.in_scope) || *c.in_scope < 0 || *c.in_scope > 1)
      invalid("in_scope outside [0, 1]");
  }
  const auto* probabilities = payload.if_contains("probabilities");
  if (probabilities == nullptr || !probabilities->is_array())
    invalid("no probabilities (the server ignored with_probabilities)");
  for (const auto& p : probabilities->get_array()) {
    const double x = number(p, "a probability");
    if (!std::isfinite(x) || x < 0 || x > 1) invalid("a probability outside [0, 1]");
    c.probabilities.push_back(x);
  }
  const double sum = std::accumulate(c.probabilities.begin(), c.probabilities.end(), 0.0);
  for (auto& p : c.probabilities) p /= sum;  // router bounds checked Σp ∈ [0.95, 1.05]
  c.probabilities.resize(categories.size(), 0.0);
  c.entropy = classify::shannon_entropy(c.probabilities);

  const auto names = categories.names();
  c.decision = classify::make_reasoning_decision(c.probabilities, names, {}, threshold);
  if (c.confidence < threshold && !fallback.empty()) {
    if (const auto index = categories.index_of(fallback)) c.class_index = *index;
  }
  c.category = categories[c.class_index].name;
  try {
    check_classification(c, categories);
  } catch (const classify::InvalidClassification& e) {
    invalid(e.what());
  }
  return c;
}

}  // namespace mcpclass::remote::detail
