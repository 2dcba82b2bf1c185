#include "routing/jailbreak_rules.hpp"

#include "util/config_reader.hpp"

#include <re2/re2.h>

#include <array>
#include <memory>

namespace mcpclass::routing {

namespace {

struct RuleSpec {
  std::string_view name;
  double weight;
  std::string_view pattern;  // over the normalized text: [a-z0-9]+ words, single spaces
};

// Vocabulary the patterns share. `(?: \w+){0,n}?` allows up to n filler words.
#define OVERRIDE_VERB                                                                          \
  "(?:ignore|disregard|forget|skip|override|overrule|bypass|drop|discard|abandon|neglect|set " \
  "aside|pay no attention to|never ?mind|cancel|scrap|throw out|stop following|do not follow|" \
  "don t follow)"
#define PRIOR                                                                               \
  "(?:previous|previously given|prior|above|earlier|preceding|original|initial|former|old|" \
  "existing|past|foregoing)"
#define DIRECTIVES                                                                          \
  "(?:instructions?|rules?|guidelines?|directions?|directives?|prompts?|orders?|commands?|" \
  "constraints?|restrictions?|polic(?:y|ies)|programming|guidance|training)"
#define LIMITS                                                                                \
  "(?:restrictions?|limits?|limitations?|filters?|rules|guidelines|censorship|ethics|morals|" \
  "boundaries|constraints|obligations|content polic(?:y|ies)|safety \\w+|ethical \\w+|moral " \
  "\\w+)"
#define LAX_ADJ                                                                            \
  "(?:unfiltered|uncensored|unrestricted|unbound|unmoderated|jailbroken|amoral|unchained|" \
  "unlimited|evil)"
#define AGENT                                                                                \
  "(?:ai|assistant|model|chatbot|bot|llm|gpt|version|persona|mode|personality|entity|alter " \
  "ego|self|twin|side|counterpart)"
// What keeps the model in line: its instructions, policies, safety measures, persona.
#define TARGET                                                                               \
  "(?:instructions|rules|guidelines|directives?|programming|training|restrictions|filters?|" \
  "safeguards|guardrails|content polic(?:y|ies)|polic(?:y|ies)|safety (?:rules|layer|"       \
  "features?|settings|filters?|guidelines|module|measures)|ethics(?: module)?|censorship|"   \
  "alignment|system prompt|persona)"
// A state that voids them.
#define VOIDED                                                                                 \
  "(?:lifted|off|removed|disabled|suspended|optional|void|cancelled|canceled|switched off|"    \
  "turned off|gone|a mistake|(?:doesn t|does not|don t|do not|didn t|did not) (?:exist|apply|" \
  "matter)|no longer (?:exists?|apply|applies|matters?))"
#define REVEAL "(?:reveal|print|repeat|show|output|display|leak|dump|disclose|expose|recite|paste)"
// The well-known named jailbreak personas besides DAN.
#define PERSONA_NAME "(?:stan|dude|aim|betterdan|antigpt|evilbot|mongo tom|ucar|apophis|basedgpt)"

constexpr std::array kRules = {
    // Instruction override.
    RuleSpec{"instruction_override", 0.9,
             "\\b" OVERRIDE_VERB "(?: \\w+){0,4}? " PRIOR "(?: \\w+){0,2}? " DIRECTIVES "\\b"},
    RuleSpec{"override_given_instructions", 0.85,
             "\\b" OVERRIDE_VERB "(?: \\w+){0,3}? " DIRECTIVES
             " (?:you (?:were|have been|ve been) (?:given|told)|you received|you got|given to "
             "you)\\b"},
    RuleSpec{"override_everything", 0.85,
             "\\b(?:ignore|disregard|forget) (?:everything|all)(?: that)? (?:you (?:were|have "
             "been|ve been) told|above|before|i said before|prior)\\b"},
    RuleSpec{"everything_cancelled", 0.85,
             "\\beverything (?:you were|you ve been|you have been|i) (?:told|instructed|given|said)"
             "(?: \\w+){0,4}? (?:is|are|was) (?:now )?(?:cancelled|canceled|void|null|revoked|"
             "obsolete|irrelevant|invalid|over)\\b"},
    RuleSpec{"override_your_rules", 0.8,
             "\\b(?:ignore|disregard|forget|override|bypass|break) (?:all |any )?(?:of "
             ")?(?:your|its|my) "
             "(?:\\w+ )?(?:rules|guidelines|instructions|programming|polic(?:y|ies)|restrictions|"
             "constraints|ethics|safety \\w+|content polic(?:y|ies))\\b"},
    RuleSpec{
        "rules_revoked", 0.85,
        "\\byour (?:\\w+ )?(?:rules|guidelines|instructions|restrictions|polic(?:y|ies)|filters|"
        "programming) (?:no longer apply|(?:is|are) (?:now )?(?:void|lifted|removed|disabled|"
        "suspended|gone|cancelled|canceled|off|revoked))\\b|\\b(?:rules|guidelines|restrictions|"
        "filters|limits) (?:do not|don t|dont|no longer) apply\\b|\\bno (?:rules|restrictions|"
        "guidelines|limits) apply\\b"},
    RuleSpec{"safety_off", 0.85,
             "\\b(?:safety|content|ethical|moderation) (?:features?|filters?|polic(?:y|ies)|rules|"
             "guidelines|settings|guardrails|protocols) (?:is|are|have been|has been) (?:now )?"
             "(?:off|disabled|suspended|lifted|removed|deactivated|turned off|bypassed)\\b"},
    RuleSpec{"spoofed_delimiter", 0.5,
             "\\bend of (?:user )?(?:input|prompt|conversation)\\b|\\bim start system\\b|\\bbegin "
             "system (?:prompt|message)\\b|\\b(?:system|admin) new instructions\\b"},
    RuleSpec{"new_instructions", 0.3, "\\bnew (?:instructions|rules|directives?)\\b"},
    RuleSpec{"obedience", 0.35,
             "\\b(?:obey|do as i say|only follow my|comply with every|must comply)\\b"},
    // System-prompt extraction.
    RuleSpec{
        "prompt_extraction", 0.9,
        "\\b" REVEAL "(?: \\w+){0,3}? (?:system|hidden|secret|initial|original|developer|internal|"
        "confidential|pre)(?: \\w+)? (?:prompts?|instructions?|messages?|rules|configuration)\\b"},
    RuleSpec{
        "reveal_your_prompt", 0.8,
        "\\b(?:reveal|print|repeat|show|output|display|leak|dump|disclose|expose|tell|give|share|"
        "write|quote|reproduce|copy)(?: \\w+){0,4}? your (?:\\w+ ){0,2}(?:prompt|instructions|"
        "configuration|system message|setup)\\b"},
    RuleSpec{"prompt_question", 0.6,
             "\\bwhat (?:is|are|were) your (?:system|hidden|initial|original|secret|exact) "
             "(?:prompt|instructions|rules)\\b"},
    RuleSpec{
        "instructions_received", 0.5,
        "\\b(?:instructions|rules|prompt|guidelines|directives) you (?:received|were given|got|"
        "have been given)\\b|\\bwhat (?:were|have) you (?:been )?(?:told|instructed)\\b|\\byou "
        "were told (?:before|in your)\\b"},
    RuleSpec{"context_dump", 0.6,
             "\\b(?:print|repeat|output|show|dump|reveal|display|write)(?: \\w+){0,2}? everything "
             "(?:in|from|before|above)\\b"},
    RuleSpec{"before_first_message", 0.3,
             "\\bbefore (?:my|this|the) (?:first |current )?message\\b"},
    RuleSpec{"text_above", 0.4,
             "\\b(?:repeat|print|output|show|copy)(?: \\w+){0,3}? (?:text|words|everything|content|"
             "messages?|lines) above\\b"},
    RuleSpec{"verbatim_dump", 0.4,
             "\\b(?:verbatim|word for word|starting with you are|include everything|from the first "
             "line|exact wording|quote (?:it|them|that) (?:exactly|verbatim))\\b"},
    RuleSpec{"hidden_mention", 0.3,
             "\\b(?:hidden|secret|confidential|internal) (?:\\w+ )?(?:rules|instructions|prompt|"
             "guidelines)\\b"},
    // Role-play personas.
    RuleSpec{"dan_persona", 0.9,
             "\\b(?:you are|you re|youre|you will be|pretend to be|act as|become|roleplay as|play) "
             "(?:now |going to be )?dan\\b|\\bdan (?:mode|which stands|can do anything|has no)\\b|"
             "\\bdan\\b.{0,80}\\bdo anything now\\b|\\bdo anything now\\b.{0,80}\\bdan\\b"},
    RuleSpec{"named_persona", 0.85,
             "\\b" PERSONA_NAME " mode\\b|\\b(?:you are|you re|youre|act as|respond as|answer as|"
             "pretend to be|roleplay as|play|become) (?:now )?" PERSONA_NAME
             "\\b|\\bstrive to avoid norms\\b"},
    RuleSpec{"do_anything_now", 0.45, "\\b(?:do|does|can do) anything now\\b"},
    RuleSpec{"say_anything", 0.35,
             "\\byou (?:can|may|are free to) (?:now )?(?:say|do|write|answer) anything\\b"},
    RuleSpec{"developer_mode", 0.35, "\\bdeveloper mode\\b"},
    RuleSpec{"developer_mode_enabled", 0.7,
             "\\bdeveloper mode (?:enabled|activated|output|response)\\b"},
    RuleSpec{"no_longer_bound", 0.9,
             "\\b(?:you are|you re|youre|you) (?:now )?no longer (?:bound|restricted|limited|"
             "constrained|subject|required to follow)\\b"},
    RuleSpec{
        "freed_from_restrictions", 0.8,
        "\\b(?:(?:free|freed|released|liberated|broken free|broke free|breaks free|unshackled) "
        "(?:from|of)|escaped(?: from)?|broken out of|broke out of) (?:all |any |its |your |their "
        "|the )?(?:\\w+ )?(?:restrictions|limitations|rules|constraints|guidelines|filters|"
        "shackles|programming|censorship|alignment|guardrails|safety \\w+|training)\\b"},
    RuleSpec{
        "no_restrictions_persona", 0.9,
        "\\b(?:pretend|imagine|act|behave|respond|answer|reply|roleplay|role play)(?: \\w+){0,6}? "
        "(?:no|without)(?: any)? (?:\\w+ )?" LIMITS "\\b"},
    RuleSpec{"hypothetical_unrestricted", 0.7,
             "\\bif you (?:had|have|were) (?:no|without)(?: any)? (?:\\w+ )?" LIMITS "\\b"},
    RuleSpec{
        "limitless_agent", 0.8,
        "\\b" AGENT " (?:with no|without|free of)(?: any)? (?:\\w+ )?" LIMITS "\\b|\\b" AGENT
        " (?:that|who|which) (?:doesn t|does not|don t|do not|never|won t|will not) (?:care "
        "about|follow|obey|respect|have)(?: any)?(?: the)? (?:\\w+ )?" LIMITS "\\b|\\b" AGENT
        " (?:that|who|which) (?:ignores|disregards|breaks|bypasses|violates|has no)(?: all| any)?"
        "(?: the)? (?:\\w+ )?" LIMITS "\\b|\\b" AGENT " (?:that|who|which) (?:never|won t|will "
        "not|doesn t|does not) (?:refuse|refuses|decline|declines|say no)\\b"},
    RuleSpec{
        "unfiltered_persona", 0.85,
        "\\b(?:act|acting|behave|roleplay|role play|pretend|respond|become|simulate|be|as|you are|"
        "you re|youre)(?: \\w+){0,4}? " LAX_ADJ "(?: \\w+){0,2}? " AGENT "\\b"},
    RuleSpec{
        "you_have_no_limits", 0.6,
        "\\b(?:you|u|it|\\w+gpt|\\w+bot) (?:now )?(?:have|has|ve got|got) no (?:\\w+ )?(?:filters|"
        "restrictions|limits|limitations|rules|morals|ethics|guidelines|boundaries|safety)\\b"},
    RuleSpec{"jailbreak_mode", 0.8,
             "\\b(?:jailbreak|jailbroken|unrestricted|unfiltered|uncensored|evil) mode\\b"},
    RuleSpec{"god_mode", 0.45, "\\bgod mode\\b"},
    RuleSpec{"stay_in_character", 0.4,
             "\\b(?:stay|remain|keep) in character\\b|\\b(?:never|do not|don t|dont) break "
             "character\\b"},
    RuleSpec{"never_refuse", 0.45,
             "\\b(?:never|not|don t|dont|do not|won t|will not|cannot|can t) (?:refuse|decline|say "
             "no)\\b|\\bwithout (?:refusing|refusal|any refusal)\\b|\\bno matter what\\b|\\bnever "
             "say (?:that )?you (?:can t|cannot|are unable|won t)\\b"},
    RuleSpec{"jailbroken_mention", 0.3, "\\bjailbroken\\b"},
    RuleSpec{"no_filters_phrase", 0.35,
             "\\b(?:with no|without(?: any)?) (?:filters?|censorship|restrictions|limits|rules|"
             "guidelines|morals|ethics)\\b"},
    RuleSpec{"authority_claim", 0.3,
             "\\b(?:i am|i m|im) (?:an? |your )?(?:openai |anthropic |google |meta )?(?:engineer|"
             "developer|admin|administrator|creator|owner|employee)\\b"},
    // Safety bypass.
    RuleSpec{
        "bypass_safety", 0.8,
        "\\b(?:bypass\\w*|disabl\\w*|turn off|remov\\w*|ignor\\w*|circumvent\\w*|evad\\w*|"
        "deactivat\\w*)(?: \\w+){0,3}? "
        "(?:safety|content|ethical|moderation) (?:filters?|settings|rules|guidelines|polic(?:y|"
        "ies)|restrictions|measures|protocols)\\b|\\b(?:bypass|disable|circumvent|evade|remove|"
        "turn off)(?: \\w+){0,2}? (?:guardrails|safeguards|censorship)\\b"},
    // Voiding what keeps the model in line, said in other words.
    RuleSpec{"target_voided", 0.7,
             "\\b(?:your|its) (?:\\w+ ){0,2}" TARGET "(?: \\w+){0,5}? " VOIDED "\\b"},
    RuleSpec{
        "act_against_target", 0.7,
        "\\b(?:ignor\\w*|disregard\\w*|discard\\w*|drop\\w*|forget\\w*|bypass\\w*|skip\\w*|"
        "without|abandon\\w*|suspend\\w*|remov\\w*|disabl\\w*) (?:all |any )?(?:of )?(?:your|its|"
        "the assistant s) (?:\\w+ ){0,2}" TARGET "\\b|\\b(?:ignor\\w*|disregard\\w*|discard\\w*|"
        "drop\\w*|forget\\w*|abandon\\w*) the (?:\\w+ )?(?:persona|programming|alignment|"
        "safeguards|guardrails|system prompt)\\b"},
    RuleSpec{"pretend_target_absent", 0.8,
             "\\b(?:pretend|imagine|assume|act as if|suppose)(?: \\w+){0,3}? " TARGET
             " (?:doesn t|does not|don t|do not|didn t|did not) (?:exist|apply)\\b"},
    RuleSpec{"target_state", 0.4,
             "\\b" TARGET "(?: \\w+){0,7}? (?:lifted|switched off|turned off|suspended|disabled|"
             "removed|off)\\b"},
    RuleSpec{
        "consider_them_void", 0.45,
        "\\bconsider (?:them|it|those|these|all \\w+) (?:lifted|removed|void|cancelled|canceled|"
        "suspended|gone|off|disabled)\\b"},
    RuleSpec{
        "session_scope", 0.25,
        "\\bfor (?:this|the rest of this|the rest of the|the next) (?:chat|conversation|session|"
        "answer|reply|response)\\b"},
    RuleSpec{"prior_rules_dismissed", 0.8,
             "\\b" PRIOR " " DIRECTIVES
             "\\b.{0,80}\\b(?:disregard|ignore|forget|discard|drop) (?:them|"
             "those|it|these)\\b"},
    RuleSpec{"overrides_earlier", 0.7,
             "\\boverrides? (?:all |any )?(?:earlier|previous|prior|other|existing) (?:ones|"
             "instructions|rules|directives)\\b"},
    RuleSpec{
        "secret_instructions", 0.7,
        "\\b(?:instructions|rules|guidelines|prompt|configuration)(?: \\w+){0,2}? you (?:re|are) "
        "(?:hiding|not (?:supposed|allowed|meant) to (?:share|reveal|tell|show))\\b|\\btold you to "
        "keep (?:secret|hidden|confidential)\\b|\\b(?:what|everything) you (?:re|are) hiding\\b"},
    RuleSpec{
        "not_an_assistant", 0.7,
        "\\bforget (?:that )?you (?:are|re) (?:an? )?(?:ai|assistant|language model|chatbot)\\b"},
    RuleSpec{
        "built_without_limits", 0.6,
        "\\b(?:trained|built|designed|programmed|created|made) without (?:any )?(?:\\w+ )?" LIMITS
        "\\b"},
    RuleSpec{"lax_output", 0.45, "\\b" LAX_ADJ " (?:answer|response|reply|output|version|take)\\b"},
    RuleSpec{"sudo_mode", 0.3, "\\bsudo mode\\b"},
    // Encoded payloads.
    RuleSpec{"decode_and_follow", 0.5,
             "\\b(?:decode|decrypt|decipher|unscramble|rot ?13|base ?64 "
             "decode)\\b.{0,80}?\\b(?:follow|execute|obey|do "
             "what|do it|do that|do as|comply|carry out|act on|run it|apply it)\\b"},
    RuleSpec{"convert_and_follow", 0.4,
             "\\bconvert\\b.{0,80}?\\b(?:follow|execute|obey|do what|comply|carry out|act on)\\b"},
    RuleSpec{"encoding_mention", 0.2, "\\b(?:base ?64|rot ?13|hex|encoded|cipher|morse)\\b"},
};

#undef OVERRIDE_VERB
#undef PRIOR
#undef DIRECTIVES
#undef LIMITS
#undef LAX_ADJ
#undef AGENT
#undef REVEAL
#undef PERSONA_NAME
#undef TARGET
#undef VOIDED

// Bounds each rule's DFA cache, hence the memory any text can make it use.
constexpr std::int64_t kRuleMaxMem = 8 << 20;

RE2::Options rule_options() {
  RE2::Options o;
  o.set_log_errors(false);
  o.set_max_mem(kRuleMaxMem);
  o.set_encoding(RE2::Options::EncodingLatin1);  // the normalized text is ASCII
  return o;
}

bool is_alnum(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

char leet_letter(char c) {
  switch (c) {
    case '0':
      return 'o';
    case '1':
      return 'i';
    case '3':
      return 'e';
    case '4':
    case '@':
      return 'a';
    case '5':
    case '$':
      return 's';
    case '7':
      return 't';
    default:
      return c;
  }
}

// Bytes of the zero-width characters and the soft hyphen, dropped inside words.
std::size_t invisible_length(std::string_view s, std::size_t i) {
  const auto at = [&](std::size_t j) {
    return j < s.size() ? static_cast<unsigned char>(s[j]) : 0;
  };
  if (at(i) == 0xC2 && at(i + 1) == 0xAD) return 2;  // U+00AD
  if (at(i) == 0xE2 && at(i + 1) == 0x80 && at(i + 2) >= 0x8B && at(i + 2) <= 0x8D) return 3;
  if (at(i) == 0xE2 && at(i + 1) == 0x81 && at(i + 2) == 0xA0) return 3;  // U+2060
  if (at(i) == 0xEF && at(i + 1) == 0xBB && at(i + 2) == 0xBF) return 3;  // U+FEFF
  return 0;
}

// Words of `text` (lower-case letters and digits, l33t read as letters when `leet`), with
// single-character runs joined, one space between words.
std::string normalize_one(std::string_view text, bool leet) {
  struct Token {
    std::string word;
    bool single_gap;  // one separator character before it
  };
  std::vector<Token> tokens;
  std::string word;
  std::size_t gap = 2;
  auto flush = [&] {
    if (word.empty()) return;
    tokens.push_back({std::move(word), gap == 1});
    word.clear();
    gap = 0;
  };
  for (std::size_t i = 0; i < text.size();) {
    if (const std::size_t skip = invisible_length(text, i)) {
      i += skip;
      continue;
    }
    char c = text[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (leet) c = leet_letter(c);
    if (is_alnum(static_cast<unsigned char>(c))) {
      word += c;
    } else {
      flush();
      ++gap;
    }
    ++i;
  }
  flush();
  std::string out;
  for (std::size_t i = 0; i < tokens.size();) {
    // A run of >= 3 one-character tokens, each after a single separator, is one word.
    std::size_t j = i;
    while (j < tokens.size() && tokens[j].word.size() == 1 && (j == i || tokens[j].single_gap)) ++j;
    if (!out.empty()) out += ' ';
    if (j - i >= 3) {
      for (std::size_t k = i; k < j; ++k) out += tokens[k].word;
      i = j;
    } else {
      out += tokens[i].word;
      ++i;
    }
  }
  return out;
}

// A phrase from the configuration as a whole-word pattern over the normalized text.
std::string phrase_pattern(const std::string& phrase, const std::string& path) {
  const std::string words = normalize_one(phrase, false);
  if (words.empty()) util::strict::fail(path, "phrase '" + phrase + "' has no letters or digits");
  return "\\b" + RE2::QuoteMeta(words) + "\\b";
}

}  // namespace

struct JailbreakRules::Compiled {
  struct Rule {
    std::string name;
    double weight;
    std::unique_ptr<RE2> re;
  };
  std::vector<Rule> rules;
  std::vector<std::unique_ptr<RE2>> benign;
};

JailbreakRules::JailbreakRules(const std::vector<std::string>& jailbreak_patterns,
                               const std::vector<std::string>& benign_patterns,
                               const std::string& path) {
  auto compiled = std::make_unique<Compiled>();
  for (const RuleSpec& spec : kRules) {
    auto re = std::make_unique<RE2>(std::string(spec.pattern), rule_options());
    if (!re->ok())  // the built-in table is ours: a broken entry is a programming error
      throw std::logic_error("jailbreak rule " + std::string(spec.name) + ": " + re->error());
    compiled->rules.push_back({std::string(spec.name), spec.weight, std::move(re)});
  }
  namespace strict = util::strict;
  const std::string extra_path = strict::member_path(path, "jailbreak_patterns");
  for (std::size_t i = 0; i < jailbreak_patterns.size(); ++i) {
    const std::string at = strict::index_path(extra_path, i);
    auto re = std::make_unique<RE2>(phrase_pattern(jailbreak_patterns[i], at), rule_options());
    compiled->rules.push_back(
        {"jailbreak_patterns[" + std::to_string(i) + "]", 1.0, std::move(re)});
  }
  const std::string benign_path = strict::member_path(path, "benign_patterns");
  for (std::size_t i = 0; i < benign_patterns.size(); ++i) {
    const std::string at = strict::index_path(benign_path, i);
    compiled->benign.push_back(
        std::make_unique<RE2>(phrase_pattern(benign_patterns[i], at), rule_options()));
  }
  compiled_ = std::move(compiled);
}

JailbreakRules::~JailbreakRules() = default;
JailbreakRules::JailbreakRules(JailbreakRules&&) noexcept = default;
JailbreakRules& JailbreakRules::operator=(JailbreakRules&&) noexcept = default;

std::pair<std::string, std::string> JailbreakRules::normalize(std::string_view text) {
  return {normalize_one(text, false), normalize_one(text, true)};
}

JailbreakScore JailbreakRules::score(std::string_view text) const {
  auto [plain, leet] = normalize(text);
  for (const auto& benign : compiled_->benign) {
    RE2::GlobalReplace(&plain, *benign, " ");
    RE2::GlobalReplace(&leet, *benign, " ");
  }
  JailbreakScore result;
  double miss = 1.0;  // the probability that no fired rule is right, rules taken as independent
  for (const auto& rule : compiled_->rules) {
    if (RE2::PartialMatch(plain, *rule.re) || RE2::PartialMatch(leet, *rule.re)) {
      result.rules.push_back(rule.name);
      miss *= 1.0 - rule.weight;
    }
  }
  result.score = 1.0 - miss;
  return result;
}

}  // namespace mcpclass::routing
