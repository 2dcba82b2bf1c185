// MCP protocol revisions and version negotiation.
// Thread-safety: constants and pure functions only.
#pragma once

#include <array>
#include <optional>
#include <string_view>

namespace mcpclass::protocol {

inline constexpr std::string_view k2024_11_05 = "2024-11-05";
inline constexpr std::string_view k2025_03_26 = "2025-03-26";
inline constexpr std::string_view k2025_06_18 = "2025-06-18";
inline constexpr std::string_view k2025_11_25 = "2025-11-25";
/// The stateless revision: no initialize handshake, version and capabilities in each request's
/// `_meta`, `server/discover`, `resultType` on results.
inline constexpr std::string_view k2026_07_28 = "2026-07-28";

/// Handshake-era revisions we speak, newest first.
inline constexpr std::array<std::string_view, 4> kHandshakeVersions = {k2025_11_25, k2025_06_18,
                                                                       k2025_03_26, k2024_11_05};
/// Every revision we speak, newest first.
inline constexpr std::array<std::string_view, 5> kAllVersions = {
    k2026_07_28, k2025_11_25, k2025_06_18, k2025_03_26, k2024_11_05};

/// The answer to an unknown or empty requested version: the newest revision that the Semantic
/// Router's Go (mcp-go) client accepts, so routers that send "" still connect.
inline constexpr std::string_view kFallbackVersion = k2025_06_18;

/// `_meta` keys of the stateless revision.
inline constexpr std::string_view kMetaProtocolVersion = "io.modelcontextprotocol/protocolVersion";
inline constexpr std::string_view kMetaClientCapabilities =
    "io.modelcontextprotocol/clientCapabilities";
inline constexpr std::string_view kMetaClientInfo = "io.modelcontextprotocol/clientInfo";
/// Where a stateless-era result names the server.
inline constexpr std::string_view kMetaServerInfo = "io.modelcontextprotocol/serverInfo";

bool is_handshake_version(std::string_view v);
bool is_supported_version(std::string_view v);

/// The version an initialize reply carries for a requested version: the request itself when we
/// speak it in the handshake era; the newest handshake revision for a stateless-era request;
/// otherwise kFallbackVersion.
std::string_view negotiate(std::string_view requested);

/// JSON-RPC batches exist only in 2025-03-26.
bool batches_allowed(std::string_view version);

/// True when `version` is at least `minimum` (dates compare as strings).
inline bool at_least(std::string_view version, std::string_view minimum) {
  return version >= minimum;
}

}  // namespace mcpclass::protocol
