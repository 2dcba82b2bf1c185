#include "mcpclass/routing/keyword_signal.hpp"
#include "routing/keyword_fuzzy.hpp"
#include "util/config_reader.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>

namespace mcpclass::routing {

namespace strict = util::strict;

std::string_view to_string(KeywordOperator op) {
  switch (op) {
    case KeywordOperator::all_of:
      return "AND";
    case KeywordOperator::any_of:
      return "OR";
    case KeywordOperator::none_of:
      return "NOR";
  }
  return "OR";
}

std::string_view to_string(KeywordMethod method) {
  switch (method) {
    case KeywordMethod::regex:
      return "regex";
    case KeywordMethod::bm25:
      return "bm25";
    case KeywordMethod::ngram:
      return "ngram";
    case KeywordMethod::fuzzy:
      return "fuzzy";
    case KeywordMethod::pattern:
      return "pattern";
  }
  return "regex";
}

namespace {

KeywordOperator read_operator(const std::string& text, const std::string& path) {
  for (const auto op : {KeywordOperator::all_of, KeywordOperator::any_of, KeywordOperator::none_of})
    if (text == to_string(op)) return op;
  strict::fail(path, "unknown operator '" + text + "' (expected AND, OR or NOR)");
}

// Case-insensitive, as the Router lower-cases `method`; empty is the default, regex.
KeywordMethod read_method(const std::string& text, const std::string& path) {
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (lower.empty()) return KeywordMethod::regex;
  for (const auto m : {KeywordMethod::regex, KeywordMethod::bm25, KeywordMethod::ngram,
                       KeywordMethod::fuzzy, KeywordMethod::pattern})
    if (lower == to_string(m)) return m;
  strict::fail(path,
               "unknown method '" + text + "' (expected regex, bm25, ngram, fuzzy or pattern)");
}

// A method-specific key given to another method is an error, not silently ignored: the user
// believes it has an effect.
void only_for(bool applies, const std::string& path, std::string_view methods) {
  if (!applies) strict::fail(path, "applies only to " + std::string(methods));
}

double in_range(double value, double low, bool low_open, double high, const std::string& path,
                std::string_view range) {
  if (std::isnan(value) || (low_open ? value <= low : value < low) || value > high)
    strict::fail(path, "must be in " + std::string(range));
  return value;
}

}  // namespace

KeywordSignalSettings KeywordSignalSettings::from_json(const boost::json::value& v,
                                                       const std::string& path) {
  strict::ObjectReader r(v, path);
  KeywordSignalSettings s;
  s.name = strict::as_string(r.required("name"), r.path_of("name"));
  if (s.name.empty()) strict::fail(r.path_of("name"), "must not be empty");
  s.op = read_operator(strict::as_string(r.required("operator"), r.path_of("operator")),
                       r.path_of("operator"));
  s.method = read_method(r.string("method").value_or(""), r.path_of("method"));
  s.keywords = strict::as_string_list(r.required("keywords"), r.path_of("keywords"));
  if (s.keywords.empty()) strict::fail(r.path_of("keywords"), "must list at least one keyword");
  if (s.keywords.size() > kMaxKeywords)
    strict::fail(r.path_of("keywords"),
                 "at most " + std::to_string(kMaxKeywords) + " keywords per signal");
  s.case_sensitive = r.boolean("case_sensitive").value_or(false);

  const bool bm25 = s.method == KeywordMethod::bm25;
  const bool ngram = s.method == KeywordMethod::ngram;
  if (const auto t = r.number("bm25_threshold")) {
    only_for(bm25, r.path_of("bm25_threshold"), "method bm25");
    s.bm25_threshold = in_range(*t, 0, true, HUGE_VAL, r.path_of("bm25_threshold"), "(0, inf)");
  }
  if (const auto t = r.number("ngram_threshold")) {
    only_for(ngram, r.path_of("ngram_threshold"), "method ngram");
    s.ngram_threshold = in_range(*t, 0, true, 1, r.path_of("ngram_threshold"), "(0, 1]");
  }
  if (r.get("ngram_arity") != nullptr) {
    only_for(ngram, r.path_of("ngram_arity"), "method ngram");
    s.ngram_arity = *r.count("ngram_arity", 2, 8);
  }
  if (const auto f = r.boolean("fuzzy_match")) {
    only_for(s.method == KeywordMethod::regex || s.method == KeywordMethod::fuzzy,
             r.path_of("fuzzy_match"), "methods regex and fuzzy");
    if (s.method == KeywordMethod::fuzzy && !*f)
      strict::fail(r.path_of("fuzzy_match"), "method fuzzy always matches fuzzily");
    s.fuzzy_match = *f;
  }
  if (s.method == KeywordMethod::fuzzy) s.fuzzy_match = true;
  if (const auto t = r.number("fuzzy_threshold")) {
    only_for(s.fuzzy_match, r.path_of("fuzzy_threshold"),
             "method fuzzy, or method regex with fuzzy_match: true");
    s.fuzzy_threshold =
        in_range(*t, 50, false, 100, r.path_of("fuzzy_threshold"),
                 "[50, 100] (a similarity in percent; the edit distance older Semantic Router "
                 "versions read here is not supported)");
  }
  r.finish();

  const std::string keywords_path = r.path_of("keywords");
  for (std::size_t i = 0; i < s.keywords.size(); ++i) {
    const std::string& k = s.keywords[i];
    const std::string at = strict::index_path(keywords_path, i);
    if (k.empty()) strict::fail(at, "must not be empty");
    if (k.size() > kMaxKeywordBytes)
      strict::fail(at, "longer than " + std::to_string(kMaxKeywordBytes) + " bytes");
    if (!s.fuzzy_match) continue;
    const std::string fuzzy = detail::FuzzyKeywords::normalize(k, s.case_sensitive);
    if (fuzzy.empty())
      strict::fail(at, "keyword '" + k + "' has no letters or digits to match fuzzily");
    if (fuzzy.size() > detail::FuzzyKeywords::kMaxKeywordBytes)
      strict::fail(at, "longer than " + std::to_string(detail::FuzzyKeywords::kMaxKeywordBytes) +
                           " bytes, the longest keyword fuzzy matching takes");
  }
  return s;
}

boost::json::object KeywordSignalSettings::to_json() const {
  boost::json::object out{{"name", name},
                          {"operator", to_string(op)},
                          {"method", to_string(method)},
                          {"keywords", boost::json::array(keywords.begin(), keywords.end())},
                          {"case_sensitive", case_sensitive}};
  if (method == KeywordMethod::bm25) out["bm25_threshold"] = bm25_threshold;
  if (method == KeywordMethod::ngram) {
    out["ngram_threshold"] = ngram_threshold;
    out["ngram_arity"] = ngram_arity;
  }
  if (fuzzy_match) {
    out["fuzzy_match"] = true;
    out["fuzzy_threshold"] = fuzzy_threshold;
  }
  return out;
}

}  // namespace mcpclass::routing
