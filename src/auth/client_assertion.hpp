// Internal: the signed JWT a client authenticates with at the token endpoint (private_key_jwt,
// RFC 7523 section 2.2).
#pragma once

#include <string>

namespace mcpclass::auth {

/// A compact JWS with iss = sub = `client_id`, aud = `audience`, iat, exp (five minutes) and a
/// random jti, signed with the PEM private key: "ES256" (EC P-256) or "RS256" (RSA). Throws
/// AuthorizationError when the key cannot be read or does not fit the algorithm.
std::string make_client_assertion(const std::string& private_key_pem, const std::string& algorithm,
                                  const std::string& client_id, const std::string& audience);

}  // namespace mcpclass::auth
