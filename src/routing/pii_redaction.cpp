#include "mcpclass/routing/pii_recognizers.hpp"

namespace mcpclass::routing {

std::string redact(std::string_view text, std::span<const PiiMatch> matches) {
  std::string out;
  out.reserve(text.size());
  std::size_t pos = 0;
  for (const auto& m : matches) {
    if (m.begin < pos || m.begin > m.end || m.end > text.size()) continue;
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
