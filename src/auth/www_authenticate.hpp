// Internal: the parameters of a `WWW-Authenticate: Bearer ...` challenge (RFC 6750 section 3,
// RFC 9728 section 5.1 for resource_metadata).
#pragma once

#include <string>
#include <string_view>

namespace mcpclass::auth {

struct BearerChallenge {
  bool bearer = false;  ///< a Bearer challenge was present
  std::string error;    ///< e.g. "invalid_token", "insufficient_scope"
  std::string error_description;
  std::string scope;              ///< space-separated
  std::string resource_metadata;  ///< URL of the protected resource metadata
};

/// ASCII case-insensitive equality (auth schemes, parameter names, token types).
bool equals_ignoring_case(std::string_view a, std::string_view b);

/// Reads the Bearer challenge among the header's challenges; parameters of other schemes are
/// ignored, malformed parameters end the parse (what was read so far is kept).
BearerChallenge parse_www_authenticate(std::string_view header);

}  // namespace mcpclass::auth
