// Internal: strict base64url decoding (RFC 4648 §5) as JWS uses it (RFC 7515 §2): no padding, no
// whitespace, unused bits zero. Pure functions; reentrant.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace mcpclass::transport::server::jwt {

/// The decoded bytes, or nullopt for any character outside the alphabet, '=' padding, a length
/// of 1 mod 4, or non-zero trailing bits (so every byte string has exactly one encoding).
std::optional<std::string> base64url_decode(std::string_view text);

}  // namespace mcpclass::transport::server::jwt
