// Limits shared by more than one layer, each with its one default here. Every one is
// configurable where it applies (server.max_text_length, ToolOptions, the C ABI's config).
// Thread-safety: constants only.
#pragma once

#include <cstddef>

namespace mcpclass::util::limits {

/// Longest `text` classify_text accepts by default, in characters (Unicode code points).
inline constexpr std::size_t kMaxTextLength = 10000;

/// Largest message an MCP client buffers from a peer by default: a JSON response body or one SSE
/// event (HttpClientOptions::max_message_bytes).
inline constexpr std::size_t kMaxClientMessageBytes = 16 * 1024 * 1024;

/// Largest response header block, chunk-size line (with its extensions) or trailer section an
/// HTTP client buffers from a peer by default (HttpClientOptions::max_header_bytes).
inline constexpr std::size_t kMaxClientHeaderBytes = 64 * 1024;

}  // namespace mcpclass::util::limits
