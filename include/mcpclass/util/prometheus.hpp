// Prometheus text format helpers shared by every /metrics producer. Pure functions.
#pragma once

#include <string>
#include <string_view>

namespace mcpclass::util {

/// A label value escaped for the text format (backslash, double quote, newline).
inline std::string prometheus_label(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (const char c : value) {
    if (c == '\\' || c == '"') out.push_back('\\');
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out.push_back(c);
  }
  return out;
}

}  // namespace mcpclass::util
