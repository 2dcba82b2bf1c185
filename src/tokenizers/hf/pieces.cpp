#include "tokenizers/hf/pieces.hpp"

#include "mcpclass/classify/errors.hpp"
#include "tokenizers/hf/regex.hpp"

#include <algorithm>

namespace mcpclass::tokenizers::hf {

SplitBehavior split_behavior(const std::string& name) {
  if (name == "Removed") return SplitBehavior::removed;
  if (name == "Isolated") return SplitBehavior::isolated;
  if (name == "MergedWithPrevious") return SplitBehavior::merged_with_previous;
  if (name == "MergedWithNext") return SplitBehavior::merged_with_next;
  if (name == "Contiguous") return SplitBehavior::contiguous;
  throw classify::ClassifyError("unknown split behavior '" + name + "'");
}

std::vector<Match> regex_matches(const Regex& re, const std::string& s, bool invert) {
  std::vector<Match> out;
  if (s.empty()) return {{0, 0, false}};
  std::size_t prev = 0;
  for (const auto& [b, e] : re.find_all(s)) {
    if (prev != b) out.push_back({prev, b, invert});
    out.push_back({b, e, !invert});
    prev = e;
  }
  if (prev != s.size()) out.push_back({prev, s.size(), invert});
  return out;
}

std::vector<NormalizedText> split_text(const NormalizedText& text,
                                       const std::vector<Match>& matches, SplitBehavior behavior) {
  // (begin, end, remove)
  struct Part {
    std::size_t begin, end;
    bool remove;
  };
  std::vector<Part> parts;
  parts.reserve(matches.size());
  bool previous = false;
  switch (behavior) {
    case SplitBehavior::removed:
      for (const auto& m : matches) parts.push_back({m.begin, m.end, m.is_match});
      break;
    case SplitBehavior::isolated:
      for (const auto& m : matches) parts.push_back({m.begin, m.end, false});
      break;
    case SplitBehavior::merged_with_previous:
      for (const auto& m : matches) {
        if (m.is_match && !previous && !parts.empty())
          parts.back().end = m.end;
        else
          parts.push_back({m.begin, m.end, false});
        previous = m.is_match;
      }
      break;
    case SplitBehavior::merged_with_next:
      for (auto it = matches.rbegin(); it != matches.rend(); ++it) {
        if (it->is_match && !previous && !parts.empty())
          parts.back().begin = it->begin;
        else
          parts.push_back({it->begin, it->end, false});
        previous = it->is_match;
      }
      std::reverse(parts.begin(), parts.end());
      break;
    case SplitBehavior::contiguous:
      for (const auto& m : matches) {
        if (m.is_match == previous && !parts.empty())
          parts.back().end = m.end;
        else
          parts.push_back({m.begin, m.end, false});
        previous = m.is_match;
      }
      break;
  }
  std::vector<NormalizedText> out;
  out.reserve(parts.size());
  for (const auto& p : parts)
    if (!p.remove && p.end > p.begin) out.push_back(text.slice(p.begin, p.end));
  return out;
}

}  // namespace mcpclass::tokenizers::hf
