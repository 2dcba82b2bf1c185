// Internal: the HTTP server's resource-server side of MCP Authorization. Validates the bearer
// token of a request as a JWT access token, answers which scopes a tools/call needs, and writes
// the protected resource metadata (RFC 9728) and the WWW-Authenticate challenges.
// Thread-safety: every member may be called from any thread (I/O threads, concurrently).
#pragma once

#include "mcpclass/transport/server/jwt_auth.hpp"
#include "transport/server/jwt/key_source.hpp"
#include "transport/server/jwt/token.hpp"

#include <chrono>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace mcpclass::transport::server::jwt {

class Validator {
 public:
  /// Loads jwks_file or checks jwks_url (see KeySource). Throws std::runtime_error for an
  /// unusable configuration (no issuer, a resource that is not an http(s) URL, ...).
  explicit Validator(JwtAuthOptions options);

  /// The scopes granted by a valid token (`token` without "Bearer "). Throws TokenError.
  std::set<std::string> validate(
      std::string_view token,
      std::chrono::system_clock::time_point now = std::chrono::system_clock::now()) const;

  /// required_scopes, plus the tool's own when `tool` is listed.
  std::vector<std::string> scopes_for(std::string_view tool) const;
  /// The scopes of `needed` that `granted` lacks.
  static std::vector<std::string> missing(const std::vector<std::string>& needed,
                                          const std::set<std::string>& granted);

  /// The metadata document's path on this server, RFC 9728 §3.1: "/.well-known/
  /// oauth-protected-resource" followed by the resource's path ("/mcp").
  const std::string& metadata_path() const { return metadata_path_; }
  /// Its absolute URL (on the resource's origin), for `resource_metadata`.
  const std::string& metadata_url() const { return metadata_url_; }
  /// The metadata document (JSON text).
  const std::string& metadata_json() const { return metadata_json_; }

  /// `Bearer resource_metadata="..."`, with error="invalid_token" and the description when a
  /// token was presented (`description` non-empty).
  std::string unauthorized_challenge(std::string_view description) const;
  /// `Bearer error="insufficient_scope", scope="...", resource_metadata="..."`.
  std::string insufficient_scope_challenge(const std::vector<std::string>& needed) const;

  KeySource& keys() const { return *keys_; }

 private:
  JwtAuthOptions options_;
  TokenChecks checks_;
  std::unique_ptr<KeySource> keys_;
  std::string metadata_path_;
  std::string metadata_url_;
  std::string metadata_json_;
};

}  // namespace mcpclass::transport::server::jwt
