// The OAuth client's parsing pieces: WWW-Authenticate challenges, metadata locations, resource
// matching, form encoding, PKCE (RFC 7636 appendix B) and the client assertion's shape.
#include "auth/client_assertion.hpp"
#include "auth/metadata_urls.hpp"
#include "auth/oauth_session.hpp"
#include "auth/pkce.hpp"
#include "auth/token_answer.hpp"
#include "auth/www_authenticate.hpp"
#include "mcpclass/auth/oauth.hpp"

#include "net/http_client.hpp"

#include <doctest/doctest.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <boost/json.hpp>

#include <memory>

using namespace mcpclass::client;
using namespace mcpclass::auth;

TEST_CASE("client.auth: WWW-Authenticate Bearer parameters") {
  auto c = parse_www_authenticate(
      R"(Bearer error="insufficient_scope", scope="mcp:basic mcp:write", )"
      R"(resource_metadata="http://h:1/.well-known/oauth-protected-resource/mcp", )"
      R"(error_description="needs \"write\"")");
  CHECK(c.bearer);
  CHECK(c.error == "insufficient_scope");
  CHECK(c.scope == "mcp:basic mcp:write");
  CHECK(c.resource_metadata == "http://h:1/.well-known/oauth-protected-resource/mcp");
  CHECK(c.error_description == "needs \"write\"");

  SUBCASE("case-insensitive scheme and names, tokens unquoted") {
    auto d = parse_www_authenticate("bearer Error=invalid_token, SCOPE=read");
    CHECK(d.bearer);
    CHECK(d.error == "invalid_token");
    CHECK(d.scope == "read");
  }
  SUBCASE("parameters of other schemes are not taken") {
    auto d = parse_www_authenticate(
        R"(Basic realm="x", scope="basic-scope", Bearer realm="y", scope="mine")");
    CHECK(d.bearer);
    CHECK(d.scope == "mine");
    auto e = parse_www_authenticate(R"(Basic realm="x", scope="basic-scope")");
    CHECK_FALSE(e.bearer);
    CHECK(e.scope.empty());
  }
  SUBCASE("a bare scheme, an empty header, an unterminated quote") {
    CHECK(parse_www_authenticate("Bearer").bearer);
    CHECK_FALSE(parse_www_authenticate("").bearer);
    auto d = parse_www_authenticate(R"(Bearer scope="a", error="unterminated)");
    CHECK(d.scope == "a");
    CHECK(d.error.empty());
  }
}

TEST_CASE("client.auth: protected resource metadata locations, path first") {
  CHECK(protected_resource_metadata_urls("http://Example.COM:8080/mcp") ==
        std::vector<std::string>{"http://example.com:8080/.well-known/oauth-protected-resource/mcp",
                                 "http://example.com:8080/.well-known/oauth-protected-resource"});
  CHECK(protected_resource_metadata_urls("https://a.example/") ==
        std::vector<std::string>{"https://a.example/.well-known/oauth-protected-resource"});
  CHECK(protected_resource_metadata_urls("https://a.example/v1/mcp/") ==
        std::vector<std::string>{"https://a.example/.well-known/oauth-protected-resource/v1/mcp",
                                 "https://a.example/.well-known/oauth-protected-resource"});
}

TEST_CASE("client.auth: authorization server metadata locations in the specification's order") {
  CHECK(authorization_server_metadata_urls("https://auth.example") ==
        std::vector<std::string>{"https://auth.example/.well-known/oauth-authorization-server",
                                 "https://auth.example/.well-known/openid-configuration"});
  CHECK(authorization_server_metadata_urls("https://auth.example/tenant1/") ==
        std::vector<std::string>{
            "https://auth.example/.well-known/oauth-authorization-server/tenant1",
            "https://auth.example/.well-known/openid-configuration/tenant1",
            "https://auth.example/tenant1/.well-known/openid-configuration"});
  CHECK_THROWS_AS(authorization_server_metadata_urls("not a url"), AuthorizationError);
}

TEST_CASE("client.auth: resource indicator and its match with the server URL") {
  CHECK(canonical_resource("HTTPS://MCP.Example.com/mcp#frag") == "https://mcp.example.com/mcp");
  CHECK(canonical_resource("http://127.0.0.1:9/mcp?x=1") == "http://127.0.0.1:9/mcp");
  CHECK(resource_covers("http://h:1/mcp", "http://h:1/mcp"));
  CHECK(resource_covers("http://h:1", "http://h:1/mcp"));
  CHECK(resource_covers("http://h:1/", "http://h:1/mcp/"));
  CHECK_FALSE(resource_covers("https://evil.example.com/mcp", "http://h:1/mcp"));
  CHECK_FALSE(resource_covers("http://h:2/mcp", "http://h:1/mcp"));
  CHECK_FALSE(resource_covers("http://h:1/mcp", "http://h:1/mcpx"));
  CHECK_FALSE(resource_covers("http://h:1/other", "http://h:1/mcp"));
}

TEST_CASE("client.auth: form encoding escapes all but unreserved characters") {
  CHECK(form_encode({{"a", "x y+z/=&"}, {"scope", "mcp:read mcp:write"}}) ==
        "a=x%20y%2Bz%2F%3D%26&scope=mcp%3Aread%20mcp%3Awrite");
  CHECK(with_query("http://h/authorize", {{"k", "v"}}) == "http://h/authorize?k=v");
  CHECK(with_query("http://h/authorize?tenant=1#f", {{"k", "v w"}}) ==
        "http://h/authorize?tenant=1&k=v%20w");
  CHECK(query_param("http://127.0.0.1/cb?code=abc%2Fd&state=s1", "code") == "abc/d");
  CHECK(query_param("http://127.0.0.1/cb?code=abc&state=s1", "state") == "s1");
  CHECK(query_param("http://127.0.0.1/cb?code=abc", "error").empty());
  CHECK(query_param("http://127.0.0.1/cb?error_description=no+way%21&x", "error_description") ==
        "no way!");
  CHECK(query_param("http://127.0.0.1/cb?a=%zz&b=1#b=2", "a") == "%zz");
  CHECK(query_param("http://127.0.0.1/cb?a=%zz&b=1#b=2", "b") == "1");
  // fuzz_oauth's crash (Boost.URL 1.81 params() on an empty query before a fragment).
  CHECK(query_param("https://aups:e/r?#=z", "code").empty());
}

TEST_CASE("client.auth: PKCE S256 matches RFC 7636 appendix B") {
  const unsigned char octets[] = {116, 24,  223, 180, 151, 153, 224, 37,  79,  250, 96,
                                  125, 216, 173, 187, 186, 22,  212, 37,  77,  105, 214,
                                  191, 240, 91,  88,  5,   88,  83,  132, 141, 121};
  const std::string rfc_verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
  CHECK(base64url(std::string_view(reinterpret_cast<const char*>(octets), sizeof octets)) ==
        rfc_verifier);
  CHECK(pkce_s256_challenge(rfc_verifier) == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM");
  const std::string verifier = random_token(32);
  CHECK(verifier.size() == 43);  // RFC 7636: 43 to 128 characters
  CHECK(verifier.find_first_not_of(
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") ==
        std::string::npos);
  CHECK(random_token(32) != verifier);
  CHECK(base64("conformance-test-client:secret") == "Y29uZm9ybWFuY2UtdGVzdC1jbGllbnQ6c2VjcmV0");
}

namespace {

std::string generate_pem(int type) {
  EVP_PKEY* key = type == EVP_PKEY_EC ? EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256")
                                      : EVP_PKEY_Q_keygen(nullptr, nullptr, "RSA", size_t{2048});
  REQUIRE(key != nullptr);
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new(BIO_s_mem()), &BIO_free);
  PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr);
  EVP_PKEY_free(key);
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<std::size_t>(n));
}

boost::json::object decode_part(const std::string& part) {
  std::string b64 = part;
  for (auto& ch : b64) ch = ch == '-' ? '+' : ch == '_' ? '/' : ch;
  while (b64.size() % 4 != 0) b64 += '=';
  std::string out(b64.size(), '\0');
  const int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(b64.data()),
                                static_cast<int>(b64.size()));
  REQUIRE(n > 0);
  out.resize(static_cast<std::size_t>(n));
  while (!out.empty() && out.back() == '\0') out.pop_back();
  return boost::json::parse(out).as_object();
}

}  // namespace

TEST_CASE("client.auth: private_key_jwt client assertion") {
  const auto ec = generate_pem(EVP_PKEY_EC);
  const auto jwt = make_client_assertion(ec, "ES256", "client-1", "https://as.example");
  const auto dot1 = jwt.find('.');
  const auto dot2 = jwt.find('.', dot1 + 1);
  REQUIRE(dot2 != std::string::npos);
  const auto header = decode_part(jwt.substr(0, dot1));
  const auto claims = decode_part(jwt.substr(dot1 + 1, dot2 - dot1 - 1));
  CHECK(header.at("alg") == "ES256");
  CHECK(claims.at("iss") == "client-1");
  CHECK(claims.at("sub") == "client-1");
  CHECK(claims.at("aud") == "https://as.example");
  CHECK(claims.at("exp").as_int64() > claims.at("iat").as_int64());
  CHECK(jwt.size() - dot2 - 1 == 86);  // base64url of the 64-byte r || s

  const auto rsa = generate_pem(EVP_PKEY_RSA);
  CHECK_NOTHROW(make_client_assertion(rsa, "RS256", "c", "a"));
  CHECK_THROWS_WITH_AS(make_client_assertion(rsa, "ES256", "c", "a"),
                       doctest::Contains("ES256 needs an EC P-256 private key"),
                       AuthorizationError);
  CHECK_THROWS_WITH_AS(make_client_assertion("not a key", "ES256", "c", "a"),
                       doctest::Contains("not a PEM private key"), AuthorizationError);
  CHECK_THROWS_WITH_AS(make_client_assertion(ec, "HS256", "c", "a"),
                       doctest::Contains("'HS256' is not supported"), AuthorizationError);
}

TEST_CASE("client.auth: AuthorizationError names the step, status and the server's error") {
  AuthorizationError e("token request", 400, "invalid_grant", "code expired");
  CHECK(std::string(e.what()) ==
        "authorization failed at token request (HTTP 400): invalid_grant - code expired");
  CHECK(e.step() == "token request");
  CHECK(e.status() == 400);
  CHECK(std::string(AuthorizationError("authorization", 0, "", "no redirect").what()) ==
        "authorization failed at authorization: no redirect");
}

TEST_CASE("client.auth: plain http endpoints are refused off loopback before any request") {
  OAuthOptions options;
  options.grant = OAuthOptions::Grant::client_credentials;
  options.client_id = "c";
  options.client_secret = "s";
  // 192.0.2.0/24 is TEST-NET-1: nothing answers there, so a request would time out, not fail.
  OAuthSession session(options, "http://192.0.2.1/mcp", std::chrono::seconds(1), "");
  CHECK_THROWS_WITH_AS(
      session.answer_challenge(401, R"(Bearer resource_metadata="http://192.0.2.1/prm")", ""),
      doctest::Contains("is not https"), AuthorizationError);
  CHECK(session.authorization().empty());
  // A name that starts like a loopback address is a remote host (issue 15).
  OAuthSession named(options, "http://127.attacker.example/mcp", std::chrono::seconds(1), "");
  CHECK_THROWS_WITH_AS(
      named.answer_challenge(401, R"(Bearer resource_metadata="http://127.attacker.example/prm")",
                             ""),
      doctest::Contains("insecure_endpoint - http://127.attacker.example/"), AuthorizationError);
}

TEST_CASE("client.auth: loopback is localhost, 127.0.0.0/8 and ::1, by address, never by name") {
  using mcpclass::net::is_loopback_host;
  for (const char* host : {"localhost", "LocalHost", "127.0.0.1", "127.255.0.9", "::1"})
    CHECK_MESSAGE(is_loopback_host(host), host);
  for (const char* host : {"127.attacker.example", "127.0.0.1.nip.io", "localhost.example", "127.1",
                           "10.0.0.1", "::ffff:10.0.0.1", "0.0.0.0", "::", "", "[::1]"})
    CHECK_MESSAGE(!is_loopback_host(host), host);
}

TEST_CASE("client.auth: token answers: a token, Bearer, and a lifetime clamped to a year") {
  auto a = parse_token_answer(
      R"({"access_token":"t","token_type":"bearer","expires_in":1e300,"refresh_token":"r"})",
      "token");
  CHECK(a.access_token == "t");
  CHECK(a.refresh_token == "r");
  REQUIRE(a.lifetime);
  CHECK(*a.lifetime == std::chrono::hours(24 * 365));
  CHECK(parse_token_answer(R"({"access_token":"t","expires_in":-5})", "token").lifetime ==
        std::chrono::milliseconds(0));
  CHECK_FALSE(parse_token_answer(R"({"access_token":"t","expires_in":"60"})", "token").lifetime);
  CHECK_THROWS_WITH_AS(parse_token_answer(R"({"token_type":"Bearer"})", "refresh"),
                       doctest::Contains("no access_token"), AuthorizationError);
  CHECK_THROWS_WITH_AS(parse_token_answer(R"({"access_token":"t","token_type":"MAC"})", "token"),
                       doctest::Contains("is not Bearer"), AuthorizationError);
  CHECK_THROWS_WITH_AS(parse_token_answer("<html>", "token"), doctest::Contains("not JSON"),
                       AuthorizationError);
}

TEST_CASE("client.auth: metadata must name its issuer and keep endpoints on its origin") {
  const std::string issuer = "https://auth.example/tenant";
  auto metadata = boost::json::parse(
                      R"({"issuer":"https://auth.example/tenant",
                          "token_endpoint":"https://auth.example/token",
                          "registration_endpoint":"http://127.0.0.1:9/canary"})")
                      .as_object();
  CHECK_THROWS_WITH_AS(check_issuer_metadata(issuer, metadata, false, false),
                       doctest::Contains("registration_endpoint"), AuthorizationError);
  CHECK_NOTHROW(check_issuer_metadata(issuer, metadata, false, true));
  metadata["issuer"] = "https://other.example";
  CHECK_THROWS_WITH_AS(check_issuer_metadata(issuer, metadata, false, true),
                       doctest::Contains("fetched for"), AuthorizationError);
  metadata.erase("registration_endpoint");
  CHECK_NOTHROW(check_issuer_metadata(issuer, metadata, true, false));
}
