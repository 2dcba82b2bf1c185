#define PCRE2_CODE_UNIT_WIDTH 8
#include "tokenizers/hf/regex.hpp"

#include "mcpclass/classify/errors.hpp"

#include <pcre2.h>

#include <algorithm>
#include <cstdint>

namespace mcpclass::tokenizers::hf {

namespace {

// Match state is per thread: a Regex is shared by every encode() call.
struct ThreadState {
  pcre2_match_data* data = pcre2_match_data_create(16, nullptr);
  // Long whitespace runs backtrack through `\s+(?!\S)`: give the JIT more than its 32 KiB.
  pcre2_jit_stack* stack = pcre2_jit_stack_create(32 * 1024, 8 * 1024 * 1024, nullptr);
  pcre2_match_context* context = pcre2_match_context_create(nullptr);
  ThreadState() { pcre2_jit_stack_assign(context, nullptr, stack); }
  ~ThreadState() {
    pcre2_match_context_free(context);
    pcre2_jit_stack_free(stack);
    pcre2_match_data_free(data);
  }
  ThreadState(const ThreadState&) = delete;
  ThreadState& operator=(const ThreadState&) = delete;
};

ThreadState& thread_state() {
  thread_local ThreadState state;
  return state;
}

// Oniguruma's \s (and \S) is exactly White_Space; PCRE2's also takes U+180E, which Unicode 6.3
// dropped. Spell it out (inside a class, only \s: a negated set cannot nest there).
constexpr const char* kWhiteSpace =
    R"(\x{9}-\x{D}\x{20}\x{85}\x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000})";

std::string onig_to_pcre2(const std::string& pattern) {
  std::string out;
  out.reserve(pattern.size());
  bool in_class = false;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c == '\\' && i + 1 < pattern.size()) {
      const char n = pattern[++i];
      if (n == 's')
        out += in_class ? std::string(kWhiteSpace) : "[" + std::string(kWhiteSpace) + "]";
      else if (n == 'S' && !in_class)
        out += "[^" + std::string(kWhiteSpace) + "]";
      else
        out.append({c, n});
      continue;
    }
    if (c == '[' && !in_class) {
      in_class = true;
      out += c;
      // A leading ']' or '^]' is a literal member.
      if (i + 1 < pattern.size() && pattern[i + 1] == '^') out += pattern[++i];
      if (i + 1 < pattern.size() && pattern[i + 1] == ']') out += pattern[++i];
      continue;
    }
    if (c == ']' && in_class) in_class = false;
    out += c;
  }
  return out;
}

// A hostile tokenizer.json pattern can backtrack at every start position: PCRE2's match limit
// bounds one pcre2_match call, not the calls find_all makes along a text ((?:a|aa)+$|. spent
// 1.71 s on 2 KB at the default limit). So a text gets a total in PCRE2's match-limit units,
// in proportion to its length (with no fixed part, the pieces a pre-tokenizer hands the regex
// one by one add up to a bound on the whole text): each call first runs under a small limit
// (the GPT-2 and Llama 3 patterns needed at most 25 units per match, over English text and long
// runs of spaces, JIT or not), then, if it needs more, under ten times more, and so on up to
// kCallLimit; every run is charged its whole limit, so the charges bound the work whatever the
// pattern does. The interpreter (when JIT compiling failed) also has depth and heap limits.
class MatchBudget {
 public:
  static constexpr std::uint32_t kFirstLimit = 1000;
  static constexpr std::uint32_t kCallLimit = 1'000'000;
  /// Four first tries per byte: JIT code spends ~5 ns a unit, so ~20 µs a byte at most.
  static std::uint64_t total(std::size_t bytes) {
    return (static_cast<std::uint64_t>(bytes) + 1) * 4 * kFirstLimit;
  }

  explicit MatchBudget(std::size_t bytes) : left_(total(bytes)) {}

  /// pcre2_match's result; PCRE2_ERROR_MATCHLIMIT once the text's budget is spent.
  int match(const pcre2_code* code, std::string_view text, std::size_t pos, pcre2_match_data* data,
            pcre2_match_context* context) {
    pcre2_set_depth_limit(context, kDepthLimit);
    pcre2_set_heap_limit(context, kHeapLimitKiB);
    for (std::uint64_t limit = kFirstLimit;; limit *= 10) {
      limit = std::min({limit, std::uint64_t{kCallLimit}, left_});
      if (limit == 0) return PCRE2_ERROR_MATCHLIMIT;
      left_ -= limit;
      pcre2_set_match_limit(context, static_cast<std::uint32_t>(limit));
      const int rc = pcre2_match(code, reinterpret_cast<PCRE2_SPTR>(text.data()), text.size(), pos,
                                 PCRE2_NO_UTF_CHECK, data, context);
      if (rc != PCRE2_ERROR_MATCHLIMIT || limit == kCallLimit) return rc;
    }
  }

 private:
  static constexpr std::uint32_t kDepthLimit = 100'000;
  static constexpr std::uint32_t kHeapLimitKiB = 64 * 1024;
  std::uint64_t left_;
};

}  // namespace

struct Regex::Impl {
  pcre2_code* code = nullptr;
  std::string pattern;  // as tokenizer.json spells it, for errors
  ~Impl() { pcre2_code_free(code); }
};

Regex::Regex(const std::string& pattern) : impl_(std::make_unique<Impl>()) {
  int error = 0;
  PCRE2_SIZE error_offset = 0;
  impl_->pattern = pattern;
  const std::string translated = onig_to_pcre2(pattern);
  impl_->code =
      pcre2_compile(reinterpret_cast<PCRE2_SPTR>(translated.data()), translated.size(),
                    PCRE2_UTF | PCRE2_UCP | PCRE2_NO_UTF_CHECK, &error, &error_offset, nullptr);
  if (impl_->code == nullptr) {
    PCRE2_UCHAR message[256];
    pcre2_get_error_message(error, message, sizeof message);
    throw classify::ClassifyError("invalid regex '" + pattern + "' at offset " +
                                  std::to_string(error_offset) + ": " +
                                  reinterpret_cast<const char*>(message));
  }
  pcre2_jit_compile(impl_->code, PCRE2_JIT_COMPLETE);  // falls back to the interpreter
}

Regex::~Regex() = default;

std::vector<std::pair<std::size_t, std::size_t>> Regex::find_all(std::string_view text) const {
  std::vector<std::pair<std::size_t, std::size_t>> out;
  ThreadState& st = thread_state();
  MatchBudget budget(text.size());
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const int rc = budget.match(impl_->code, text, pos, st.data, st.context);
    if (rc == PCRE2_ERROR_NOMATCH) break;
    if (rc == PCRE2_ERROR_MATCHLIMIT || rc == PCRE2_ERROR_DEPTHLIMIT ||
        rc == PCRE2_ERROR_HEAPLIMIT || rc == PCRE2_ERROR_JIT_STACKLIMIT) {
      throw classify::ClassifyError("the tokenizer's regex '" + impl_->pattern.substr(0, 200) +
                                    "' needs more than its matching budget on this text of " +
                                    std::to_string(text.size()) + " bytes (" +
                                    std::to_string(MatchBudget::total(text.size())) +
                                    " steps); the text is refused");
    }
    if (rc < 0) {
      PCRE2_UCHAR message[256];
      pcre2_get_error_message(rc, message, sizeof message);
      throw classify::ClassifyError(std::string("regex match failed: ") +
                                    reinterpret_cast<const char*>(message));
    }
    const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(st.data);
    out.emplace_back(ov[0], ov[1]);
    if (ov[1] > ov[0]) {
      pos = ov[1];
    } else {
      // An empty match: step over one character.
      pos = ov[1] + 1;
      while (pos < text.size() && (static_cast<unsigned char>(text[pos]) & 0xC0) == 0x80) ++pos;
    }
  }
  return out;
}

std::string Regex::escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (std::string_view("\\^$.|?*+()[]{}-/#&~ \t\n").find(c) != std::string_view::npos)
      out.push_back('\\');
    out.push_back(c);
  }
  return out;
}

}  // namespace mcpclass::tokenizers::hf
