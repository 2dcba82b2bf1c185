// Internal: a JWK Set (RFC 7517) → OpenSSL public keys. RSA keys (n, e; 2048 bits or more) for
// RS256 and P-256 EC keys (x, y) for ES256; keys for other algorithms, other curves or other
// uses than "sig" are skipped, a malformed key of a supported type is an error.
// Thread-safety: a KeySet is immutable once built; share it freely.
#pragma once

#include <openssl/evp.h>

#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace mcpclass::transport::server::jwt {

/// The two signature algorithms accepted.
enum class Algorithm { rs256, es256 };

/// "RS256" → rs256, "ES256" → es256; nullopt for anything else.
std::optional<Algorithm> algorithm_named(std::string_view name);
std::string_view algorithm_name(Algorithm alg);

struct Jwk {
  std::string kid;
  Algorithm alg;  ///< implied by kty (RSA → RS256, EC P-256 → ES256) and, if present, "alg"
  std::shared_ptr<EVP_PKEY> key;
};

/// Keys by kid (a key without kid is kept under "").
using KeySet = std::map<std::string, Jwk, std::less<>>;

/// A JWK Set that cannot be used; the message names the key and the field.
class JwksError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Parses `{"keys":[...]}`. Throws JwksError for text that is not such a document, more than
/// `max_keys` keys, a malformed RSA or EC key, a duplicate kid or no usable key at all.
KeySet parse_jwks(std::string_view text, std::size_t max_keys);

}  // namespace mcpclass::transport::server::jwt
