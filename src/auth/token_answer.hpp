// What the client reads from an authorization server before trusting it: the token endpoint's
// answer, and authorization server metadata checked against the issuer it was fetched for.
// Pure functions of their inputs (fuzzed by tests/fuzz/fuzz_oauth.cpp).
// Thread-safety: free functions without shared state.
#pragma once

#include <boost/json/object.hpp>

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace mcpclass::auth {

/// A token endpoint's successful answer (RFC 6749 section 5.1).
struct TokenAnswer {
  std::string access_token;
  std::string refresh_token;  ///< Empty when none was issued.
  /// `expires_in`, clamped to [0, one year]; none when absent or not a number.
  std::optional<std::chrono::milliseconds> lifetime;
};

/// Reads a 200 answer of the token endpoint. Throws AuthorizationError naming `step` when the
/// body is not a JSON object, has no access_token, or its token_type is not Bearer.
TokenAnswer parse_token_answer(std::string_view body, const std::string& step);

/// RFC 8414 section 3.3: the metadata must name the `issuer` it was fetched for (unless the
/// issuer was `guessed`, as for 2025-03-26 servers), and unless the issuer is `trusted` (listed in
/// allowed_authorization_servers) its authorization, token and registration endpoints must be on
/// the issuer's origin. Throws AuthorizationError (invalid_issuer / invalid_metadata).
void check_issuer_metadata(const std::string& issuer, const boost::json::object& metadata,
                           bool guessed, bool trusted);

}  // namespace mcpclass::auth
