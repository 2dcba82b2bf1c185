// The regexes of tokenizer.json (Oniguruma syntax in the reference library) on PCRE2 in UTF + UCP
// mode with JIT: they need Unicode classes and look-ahead (`\s+(?!\S)`), which RE2 lacks.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mcpclass::tokenizers::hf {

/// Immutable after construction; find_all() may be called concurrently from any thread.
class Regex {
 public:
  /// Throws ClassifyError naming the pattern and PCRE2's message.
  explicit Regex(const std::string& pattern);
  ~Regex();
  Regex(const Regex&) = delete;
  Regex& operator=(const Regex&) = delete;
  /// Every non-overlapping match, leftmost first, as byte ranges of `text`.
  std::vector<std::pair<std::size_t, std::size_t>> find_all(std::string_view text) const;
  /// `s` with every regex metacharacter escaped, so that it matches itself.
  static std::string escape(std::string_view s);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace mcpclass::tokenizers::hf
