// Checks on what authorization servers answer.
#include "auth/token_answer.hpp"

#include "auth/metadata_urls.hpp"
#include "auth/www_authenticate.hpp"
#include "mcpclass/auth/oauth.hpp"
#include "mcpclass/util/json_fields.hpp"
#include "net/http_client.hpp"
#include "util/excerpt.hpp"

#include <fmt/format.h>
#include <boost/json/parse.hpp>

#include <algorithm>

namespace mcpclass::auth {

namespace json = boost::json;
using util::string_or_empty;

TokenAnswer parse_token_answer(std::string_view body, const std::string& step) {
  std::error_code ec;
  const auto v = json::parse(body, ec);
  if (ec || !v.is_object())
    throw AuthorizationError(step, 200, "",
                             "the token answer is not JSON: " + util::excerpt(std::string(body)));
  const json::object& answer = v.get_object();
  TokenAnswer out;
  out.access_token = string_or_empty(answer, "access_token");
  if (out.access_token.empty())
    throw AuthorizationError(step, 200, "", "the token answer has no access_token");
  const std::string type = string_or_empty(answer, "token_type");
  if (!type.empty() && !equals_ignoring_case(type, "bearer"))
    throw AuthorizationError(step, 200, "", "token_type '" + type + "' is not Bearer");
  out.refresh_token = string_or_empty(answer, "refresh_token");
  if (const auto* e = answer.if_contains("expires_in"); e != nullptr && e->is_number()) {
    std::error_code nec;
    const auto seconds = e->to_number<double>(nec);
    // Clamped before the conversion: 1e300 seconds does not fit a duration (undefined
    // behaviour), and a year is as good as forever for a token. NaN is not a lifetime.
    constexpr double kLongest = 365.0 * 24 * 3600;
    if (!nec && seconds == seconds)
      out.lifetime = std::chrono::milliseconds(
          static_cast<long long>(std::clamp(seconds, 0.0, kLongest) * 1000));
  }
  return out;
}

void check_issuer_metadata(const std::string& issuer, const json::object& metadata, bool guessed,
                           bool trusted) {
  const std::string named = string_or_empty(metadata, "issuer");
  if (!guessed && named != issuer)
    throw AuthorizationError(
        "authorization server metadata", 0, "invalid_issuer",
        fmt::format("the metadata names issuer '{}', fetched for '{}'", named, issuer));
  if (trusted) return;
  const std::string origin = origin_of(issuer);
  for (const char* key : {"authorization_endpoint", "token_endpoint", "registration_endpoint"}) {
    const std::string endpoint = string_or_empty(metadata, key);
    if (!endpoint.empty() && origin_of(endpoint) != origin)
      throw AuthorizationError(
          "authorization server metadata", 0, "invalid_metadata",
          fmt::format("{} {} is not on the issuer's origin {} (list the issuer in "
                      "allowed_authorization_servers to trust it)",
                      key, endpoint, origin));
  }
}

}  // namespace mcpclass::auth
