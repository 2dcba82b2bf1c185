// Internal: one JWS compact token (RFC 7515) checked as an OAuth access token (RFC 9068):
// structure, header, signature (RS256 or ES256 with the key its kid names), iss, aud, exp, nbf;
// and its granted scopes. Pure functions; reentrant.
#pragma once

#include "transport/server/jwt/jwk.hpp"

#include <chrono>
#include <cstddef>
#include <functional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace mcpclass::transport::server::jwt {

/// Why a token was refused; what() is the error_description sent back (it names no secret).
class TokenError : public std::runtime_error {
 public:
  enum class Kind {
    invalid,           ///< 401 invalid_token
    keys_unavailable,  ///< the signing keys could not be fetched: 503
    keys_pending       ///< the kid may be among keys being fetched now: 503, retry soon
  };
  TokenError(Kind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  Kind kind() const { return kind_; }

 private:
  Kind kind_;
};

struct TokenChecks {
  std::string issuer;
  std::vector<std::string> audiences;
  std::chrono::seconds leeway{60};
  std::size_t max_token_bytes = 16 * 1024;
};

struct VerifiedToken {
  std::string subject;           ///< `sub`, may be empty
  std::set<std::string> scopes;  ///< from `scope` (space-separated) or `scp` (array or string)
};

/// The key for a kid and algorithm, or nullptr when there is none (the caller may refetch).
/// Throws TokenError(keys_unavailable or keys_pending) when the keys cannot be had now.
using KeyLookup = std::function<std::shared_ptr<const Jwk>(std::string_view kid)>;

/// Verifies `token` (the bearer token, without "Bearer "). Throws TokenError(invalid) naming the
/// first problem found: too long, not three base64url parts, a header or payload that is not a
/// JSON object, alg other than RS256/ES256 (so never "none" or HS256), a crit header, no kid or
/// an unknown one, a key of another algorithm, a bad signature; then (signature first, so a
/// forger learns nothing from the claims) iss, aud, exp (required), nbf.
VerifiedToken verify_token(std::string_view token, const KeyLookup& keys, const TokenChecks& checks,
                           std::chrono::system_clock::time_point now);

}  // namespace mcpclass::transport::server::jwt
