// Internal: PKCE (RFC 7636) and the base64url / random strings OAuth needs.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace mcpclass::auth {

/// base64url without padding (RFC 7636 appendix A).
std::string base64url(std::string_view bytes);
/// Standard base64 with padding (HTTP Basic credentials).
std::string base64(std::string_view bytes);
/// `bytes` random bytes from OpenSSL's CSPRNG, base64url-encoded (state, PKCE verifier, jti).
std::string random_token(std::size_t bytes = 32);
/// The S256 code challenge of a code verifier: base64url(SHA-256(verifier)).
std::string pkce_s256_challenge(std::string_view verifier);

}  // namespace mcpclass::auth
