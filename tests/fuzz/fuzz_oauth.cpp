// libFuzzer target: what an MCP server or authorization server sends the OAuth client: the
// WWW-Authenticate challenge; the URLs its metadata names (resource, issuer, endpoints), which the
// client turns into metadata locations and origins; authorization server metadata checked against
// its issuer; and the token endpoint's answer. None may crash or hang; malformed input is an
// exception the client reports, and an accepted token answer must hold a token and a lifetime
// within a year. The server side too: a bearer token checked as a JWT (kind 5: never accepted
// without a valid signature; base64url decodes only canonical text) and a JWK Set (kind 6).
#include "auth/metadata_urls.hpp"
#include "auth/pkce.hpp"
#include "auth/token_answer.hpp"
#include "auth/www_authenticate.hpp"
#include "mcpclass/auth/oauth.hpp"
#include "transport/server/jwt/base64url.hpp"
#include "transport/server/jwt/jwk.hpp"
#include "transport/server/jwt/token.hpp"

#include <boost/json/parse.hpp>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <string_view>

using namespace mcpclass::auth;
namespace jwt = mcpclass::transport::server::jwt;

namespace {

// A fixed P-256 key (the point is RFC 7515's example), so lookups of kid "k" succeed.
const jwt::KeySet& fuzz_keys() {
  static const jwt::KeySet keys =
      jwt::parse_jwks(R"({"keys":[{"kty":"EC","kid":"k","crv":"P-256",)"
                      R"("x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU",)"
                      R"("y":"x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"}]})",
                      8);
  return keys;
}

void fuzz_token(std::string_view text) {
  if (const auto bytes = jwt::base64url_decode(text); bytes && base64url(*bytes) != text) {
    std::fprintf(stderr, "fuzz_oauth: base64url accepted a non-canonical text\n");
    std::abort();
  }
  jwt::TokenChecks checks;
  checks.issuer = "https://auth.example";
  checks.audiences = {"https://mcp.example/mcp"};
  const jwt::KeyLookup lookup = [](std::string_view kid) -> std::shared_ptr<const jwt::Jwk> {
    const auto it = fuzz_keys().find(kid);
    return it == fuzz_keys().end() ? nullptr : std::make_shared<const jwt::Jwk>(it->second);
  };
  try {
    (void)jwt::verify_token(text, lookup, checks, std::chrono::system_clock::now());
    std::fprintf(stderr, "fuzz_oauth: a token without the key's signature was accepted\n");
    std::abort();
  } catch (const jwt::TokenError&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 7) {
    case 0: {
      const auto challenge = parse_www_authenticate(text);
      (void)challenge;
      break;
    }
    case 1:
      try {
        for (const auto& url : protected_resource_metadata_urls(text)) (void)origin_of(url);
        (void)canonical_resource(text);
        (void)resource_covers(text, text);
      } catch (const std::exception&) {
      }
      break;
    case 3:
      try {
        const TokenAnswer answer = parse_token_answer(text, "token");
        if (answer.access_token.empty() ||
            (answer.lifetime &&
             (answer.lifetime->count() < 0 || *answer.lifetime > std::chrono::hours(24 * 366)))) {
          std::fprintf(stderr, "fuzz_oauth: an accepted token answer breaks its contract\n");
          std::abort();
        }
      } catch (const AuthorizationError&) {
      }
      break;
    case 4: {
      std::error_code ec;
      const auto metadata = boost::json::parse(text, ec);
      if (ec || !metadata.is_object()) break;
      for (bool guessed : {false, true}) {
        for (bool trusted : {false, true}) {
          try {
            check_issuer_metadata("https://auth.example/tenant", metadata.get_object(), guessed,
                                  trusted);
          } catch (const std::exception&) {
          }
        }
      }
      break;
    }
    case 5:
      fuzz_token(text);
      break;
    case 6:
      try {
        (void)jwt::parse_jwks(text, 16);
      } catch (const jwt::JwksError&) {
      }
      break;
    default:
      try {
        for (const auto& url : authorization_server_metadata_urls(text)) (void)origin_of(url);
        (void)query_param(text, "code");
        (void)with_query(text, {{"state", std::string(text)}});
      } catch (const std::exception&) {
      }
      break;
  }
  return 0;
}
