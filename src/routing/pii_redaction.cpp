#include "mcpclass/routing/pii_recognizers.hpp"

#include <algorithm>
#include <vector>

namespace mcpclass::routing {

std::vector<PiiMatch> merged_spans(std::span<const PiiMatch> matches, std::size_t text_size) {
  std::vector<PiiMatch> sorted;
  for (const auto& m : matches)
    if (m.begin < m.end && m.begin < text_size)
      sorted.push_back({m.type, m.begin, std::min(m.end, text_size), m.score});
  // A source may report its spans in any order (a span tool grouped by label): each one counts.
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const PiiMatch& a, const PiiMatch& b) { return a.begin < b.begin; });
  std::vector<PiiMatch> out;
  for (auto& m : sorted) {
    if (!out.empty() && m.begin < out.back().end) {
      out.back().end = std::max(out.back().end, m.end);  // overlapping: one span over both
      out.back().score = std::max(out.back().score, m.score);
      continue;
    }
    out.push_back(std::move(m));
  }
  return out;
}

std::string redact(std::string_view text, std::span<const PiiMatch> matches) {
  std::string out;
  out.reserve(text.size());
  std::size_t pos = 0;
  for (const auto& m : merged_spans(matches, text.size())) {
    out.append(text.substr(pos, m.begin - pos));
    out += '[';
    out += m.type;
    out += ']';
    pos = m.end;
  }
  out.append(text.substr(pos));
  return out;
}

}  // namespace mcpclass::routing
