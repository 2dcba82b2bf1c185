#define PCRE2_CODE_UNIT_WIDTH 8
#include "tokenizers/hf/regex.hpp"

#include "mcpclass/classify/errors.hpp"

#include <pcre2.h>

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

}  // namespace

struct Regex::Impl {
  pcre2_code* code = nullptr;
  ~Impl() { pcre2_code_free(code); }
};

Regex::Regex(const std::string& pattern) : impl_(std::make_unique<Impl>()) {
  int error = 0;
  PCRE2_SIZE error_offset = 0;
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
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const int rc = pcre2_match(impl_->code, reinterpret_cast<PCRE2_SPTR>(text.data()), text.size(),
                               pos, PCRE2_NO_UTF_CHECK, st.data, st.context);
    if (rc == PCRE2_ERROR_NOMATCH) break;
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
