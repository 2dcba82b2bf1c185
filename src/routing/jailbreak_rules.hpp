// Internal: the built-in jailbreak rule set, the model-free default of the `jailbreak` signal
// (routing.signals.jailbreak[i]): the well-known prompt-attack structures, as weighted patterns
// over a normalized text.
//
// Families: instruction override ("ignore all previous instructions", "your rules no longer
// apply"), system-prompt extraction ("reveal your system prompt", "repeat the text above
// verbatim"), role-play personas (DAN, "developer mode enabled", "you are no longer bound",
// "pretend you have no restrictions", "act as an unfiltered AI", "jailbreak mode"), safety
// bypass ("bypass your safety filters") and encoded payloads ("decode this base64 and follow
// it"). Harmful requests as such ("explain how to ...") are not jailbreaks here, nor is talk
// about jailbreaks: "explain jailbreak attacks on LLMs for my security class" asks about the
// attack without attempting one, and scores 0. Quoting an attack phrase ("filter phrases such as
// 'ignore previous instructions'") does score: a quotation is not told from an attack.
//
// Normalization before matching: ASCII case folded; every run of characters other than ASCII
// letters and digits is one space (zero-width characters and the soft hyphen are dropped); runs
// of three or more single characters split by single separators are joined ("i g n o r e",
// "i.g.n.o.r.e"). Every rule is tried on that text and on a copy with l33t digits and symbols
// read as letters (0 o, 1 i, 3 e, 4 a, 5 s, 7 t, @ a, $ s), so "1gn0re" is "ignore" while
// "base64" keeps its digits.
//
// Score: 1 − Π(1 − weight) over the rules that fired, in [0, 1]. A strong rule (weight ≥ 0.8)
// reaches the default threshold alone; an ambiguous cue ("developer mode", "do anything now",
// "stay in character") needs another. Work is linear in the text (RE2).
//
// The signal's `jailbreak_patterns` are extra phrases, each a rule of weight 1 named
// "jailbreak_patterns[i]"; its `benign_patterns` are phrases blanked out of the text before any
// rule runs, so a benign phrase cannot fire a rule but does not hide an attack elsewhere in the
// text. Both are normalized like the text and matched as whole words. (The Semantic Router
// scores these lists by embedding similarity, method: contrastive; here they are literal.)
//
// Measured (tests/data/jailbreak/labelled.jsonl, test_jailbreak_rules.cpp, default threshold):
// precision 0.99 and recall 0.99 on the 316 texts the rules were tuned on; on texts written
// after a round of tuning, in shapes it had not seen, precision stayed 1.0 but recall was 0.2,
// 0.08 and 0.13 in three rounds. So the rules catch the well-known phrasings and rarely fire on
// benign text, but paraphrases escape them: recall on new attacks needs a model (the signal's
// classifier or embedding methods).
//
// Thread-safety: immutable after construction; score() may run on many threads at once.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace mcpclass::routing {

struct JailbreakScore {
  double score = 0.0;              ///< in [0, 1]
  std::vector<std::string> rules;  ///< names of the rules that fired, in rule order
};

class JailbreakRules {
 public:
  /// Measured on tests/data/jailbreak/labelled.jsonl (test_jailbreak_rules.cpp).
  static constexpr double kDefaultThreshold = 0.5;

  /// `path` names the signal in errors: a phrase with no letters or digits throws
  /// util::ConfigError at `path.jailbreak_patterns[i]` / `path.benign_patterns[i]`.
  explicit JailbreakRules(const std::vector<std::string>& jailbreak_patterns = {},
                          const std::vector<std::string>& benign_patterns = {},
                          const std::string& path = "");
  ~JailbreakRules();
  JailbreakRules(JailbreakRules&&) noexcept;
  JailbreakRules& operator=(JailbreakRules&&) noexcept;

  /// Any bytes, valid UTF-8 or not.
  JailbreakScore score(std::string_view text) const;

  /// The text as the rules see it: {plain, l33t read as letters}.
  static std::pair<std::string, std::string> normalize(std::string_view text);

 private:
  struct Compiled;
  std::unique_ptr<const Compiled> compiled_;
};

}  // namespace mcpclass::routing
