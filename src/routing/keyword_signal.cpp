#include "mcpclass/routing/keyword_signal.hpp"

#include "routing/keyword_bm25.hpp"
#include "routing/keyword_fuzzy.hpp"
#include "routing/keyword_ngram.hpp"
#include "util/config_reader.hpp"

#include <re2/re2.h>

#include <algorithm>
#include <optional>

namespace mcpclass::routing {

namespace strict = util::strict;

namespace {

// Bounds each keyword's DFA cache, hence the memory a text can make it use.
constexpr std::int64_t kRegexMaxMem = 4 << 20;

bool is_ascii_word(unsigned char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

// Whether a UTF-8 keyword has a Han character, for which the Router sets no word boundaries
// (Chinese is written without spaces).
bool has_han(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    std::size_t len = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    if (i + len > s.size()) return false;
    char32_t cp = len == 1 ? c : c & (0x7F >> len);
    for (std::size_t j = 1; j < len; ++j)
      cp = (cp << 6) | (static_cast<unsigned char>(s[i + j]) & 0x3F);
    if ((cp >= 0x3400 && cp <= 0x9FFF) || (cp >= 0xF900 && cp <= 0xFAFF) ||
        (cp >= 0x20000 && cp <= 0x3134F))
      return true;
    i += len;
  }
  return false;
}

std::string literal_pattern(const std::string& keyword) {
  const bool bounded = !has_han(keyword);
  std::string out;
  if (bounded && is_ascii_word(static_cast<unsigned char>(keyword.front()))) out += "\\b";
  out += RE2::QuoteMeta(keyword);
  if (bounded && is_ascii_word(static_cast<unsigned char>(keyword.back()))) out += "\\b";
  return out;
}

}  // namespace

struct KeywordSignal::Engines {
  std::vector<std::unique_ptr<RE2>> exact;  // regex, fuzzy, pattern
  std::optional<detail::Bm25Keywords> bm25;
  std::optional<detail::NgramKeywords> ngram;
  std::optional<detail::FuzzyKeywords> fuzzy;
};

KeywordSignal::KeywordSignal(KeywordSignalSettings settings, const std::string& path)
    : settings_(std::move(settings)) {
  auto engines = std::make_unique<Engines>();
  const auto& s = settings_;
  const std::string keywords_path = strict::member_path(path, "keywords");
  switch (s.method) {
    case KeywordMethod::bm25:
      engines->bm25.emplace(s.keywords, s.case_sensitive, path);
      break;
    case KeywordMethod::ngram:
      engines->ngram.emplace(s.keywords, s.case_sensitive, s.ngram_arity);
      break;
    case KeywordMethod::regex:
    case KeywordMethod::fuzzy:
    case KeywordMethod::pattern: {
      RE2::Options options;
      options.set_case_sensitive(s.case_sensitive);
      options.set_log_errors(false);
      options.set_max_mem(kRegexMaxMem);
      for (std::size_t i = 0; i < s.keywords.size(); ++i) {
        const std::string& k = s.keywords[i];
        const bool is_pattern = s.method == KeywordMethod::pattern;
        auto re = std::make_unique<RE2>(is_pattern ? k : literal_pattern(k), options);
        const std::string at = strict::index_path(keywords_path, i);
        if (!re->ok())
          strict::fail(at, std::string(is_pattern ? "bad pattern '" : "bad keyword '") + k +
                               "': " + re->error());
        if (is_pattern && RE2::PartialMatch("", *re))
          strict::fail(at,
                       "pattern '" + k + "' matches the empty string, so it matches every text");
        engines->exact.push_back(std::move(re));
      }
      if (s.fuzzy_match) engines->fuzzy.emplace(s.keywords, s.case_sensitive);
      break;
    }
  }
  engines_ = std::move(engines);
}

KeywordSignal::~KeywordSignal() = default;
KeywordSignal::KeywordSignal(KeywordSignal&&) noexcept = default;
KeywordSignal& KeywordSignal::operator=(KeywordSignal&&) noexcept = default;

KeywordSignal KeywordSignal::from_json(const boost::json::value& v, const std::string& path) {
  return KeywordSignal(KeywordSignalSettings::from_json(v, path), path);
}

KeywordSignalResult KeywordSignal::evaluate(std::string_view text) const {
  const auto& s = settings_;
  const std::size_t n = s.keywords.size();
  std::vector<double> scores(n, 0.0);
  std::vector<bool> found(n, false);
  if (s.method == KeywordMethod::bm25) {
    engines_->bm25->score(text, scores);
    for (std::size_t i = 0; i < n; ++i) found[i] = scores[i] >= s.bm25_threshold;
  } else if (s.method == KeywordMethod::ngram) {
    engines_->ngram->score(text, scores);
    for (std::size_t i = 0; i < n; ++i) found[i] = scores[i] >= s.ngram_threshold;
  } else {
    const re2::StringPiece piece(text.data(), text.size());
    for (std::size_t i = 0; i < n; ++i) {
      found[i] = RE2::PartialMatch(piece, *engines_->exact[i]);
      scores[i] = found[i] ? 1.0 : 0.0;
    }
    if (engines_->fuzzy && std::find(found.begin(), found.end(), false) != found.end()) {
      std::vector<double> similarity(n, 0.0);
      engines_->fuzzy->score(text, similarity);
      for (std::size_t i = 0; i < n; ++i) {
        if (found[i]) continue;
        scores[i] = similarity[i] / 100.0;
        found[i] = similarity[i] >= s.fuzzy_threshold;
      }
    }
  }

  KeywordSignalResult result;
  result.score = n == 0 ? 0.0 : *std::max_element(scores.begin(), scores.end());
  const auto hits = static_cast<std::size_t>(std::count(found.begin(), found.end(), true));
  switch (s.op) {
    case KeywordOperator::any_of:
      result.matched = hits > 0;
      break;
    case KeywordOperator::all_of:
      result.matched = hits == n;
      break;
    case KeywordOperator::none_of:
      result.matched = hits == 0;
      return result;
  }
  if (result.matched)
    for (std::size_t i = 0; i < n; ++i)
      if (found[i]) result.keywords.push_back(s.keywords[i]);
  return result;
}

}  // namespace mcpclass::routing
