// The HTTP server as an OAuth 2.1 resource server (MCP Authorization, RFC 9728): which JWT access
// tokens it accepts, where their signing keys come from, and the scopes each tool needs.
// Plain values; copy freely.
#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <string>
#include <vector>

namespace mcpclass::transport::server {

struct JwtAuthOptions {
  /// This server's canonical URI as its clients name it (e.g. "https://mcp.example/mcp"): the
  /// `resource` of the protected resource metadata, and the audience when `audiences` is empty.
  /// Empty = JWT access tokens are off.
  std::string resource;
  /// The `iss` every token must carry (exact string match).
  std::string issuer;
  /// The metadata's `authorization_servers`; empty = { issuer }.
  std::vector<std::string> authorization_servers;
  /// Accepted `aud` values (a token's `aud`, a string or an array, must contain one); empty =
  /// { resource }.
  std::vector<std::string> audiences;
  /// The signing keys: a JWK Set file read at start(), or an https:// URL (http:// only for a
  /// loopback host) fetched on first use, kept, and fetched again when a token names an unknown
  /// `kid` or the keys are older than jwks_max_age, at most once per jwks_refetch_interval.
  std::string jwks_file;
  std::string jwks_url;
  /// PEM CAs the jwks_url server is verified against; empty = the system's trust store.
  std::string jwks_ca_file;
  std::chrono::milliseconds jwks_timeout{5'000};
  std::chrono::milliseconds jwks_refetch_interval{30'000};
  std::chrono::milliseconds jwks_max_age{3'600'000};
  std::size_t max_jwks_bytes = 256 * 1024;  ///< a larger JWK Set is refused
  std::size_t max_jwks_keys = 64;           ///< ... and one with more keys
  /// Allowed clock difference for `exp` and `nbf`.
  std::chrono::seconds leeway{60};
  /// Longer Authorization tokens are refused unread (401).
  std::size_t max_token_bytes = 16 * 1024;
  /// Scopes every request needs; a tools/call of a tool listed in `tool_scopes` also needs
  /// those. Scopes come from the token's `scope` (space-separated) or `scp` (array) claim.
  std::vector<std::string> required_scopes;
  std::map<std::string, std::vector<std::string>> tool_scopes;

  bool enabled() const { return !resource.empty(); }
};

}  // namespace mcpclass::transport::server
