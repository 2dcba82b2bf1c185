// Limits shared by more than one layer, each with its one default here. Every one is
// configurable where it applies (server.max_text_length, ToolOptions, the C ABI's config).
// Thread-safety: constants only.
#pragma once

#include <cstddef>

namespace mcpclass::limits {

/// Longest `text` classify_text accepts by default, in characters (Unicode code points).
inline constexpr std::size_t kMaxTextLength = 10000;

}  // namespace mcpclass::limits
