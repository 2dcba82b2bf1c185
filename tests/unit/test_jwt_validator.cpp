// JWT access-token validation (the HTTP server as a resource server): base64url, JWK Sets, the
// token checks one by one, with keys made by OpenSSL in the test; the validator's metadata and
// challenges.
#include "auth/pkce.hpp"
#include "jwt_test_keys.hpp"
#include "transport/server/jwt/base64url.hpp"
#include "transport/server/jwt/jwk.hpp"
#include "transport/server/jwt/token.hpp"
#include "transport/server/jwt/validator.hpp"

#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

using namespace mcpclass;
using namespace mcpclass::transport::server::jwt;
namespace json = boost::json;
using test::TestKey;

namespace {

const std::string kIssuer = "https://auth.example";
const std::string kResource = "https://mcp.example/mcp";

const TestKey& rsa_key() {
  static const TestKey key = TestKey::rsa("rsa-1");
  return key;
}
const TestKey& ec_key() {
  static const TestKey key = TestKey::ec("ec-1");
  return key;
}

json::object claims(json::object extra = {}) {
  json::object c{{"iss", kIssuer},
                 {"aud", kResource},
                 {"sub", "router"},
                 {"exp", test::epoch_seconds(std::chrono::seconds(300))},
                 {"scope", "mcp classify"}};
  for (auto& [k, v] : extra) c[k] = v;
  return c;
}

TokenChecks checks() {
  TokenChecks c;
  c.issuer = kIssuer;
  c.audiences = {kResource};
  return c;
}

KeyLookup lookup_in(const KeySet& set) {
  return [&set](std::string_view kid) -> std::shared_ptr<const Jwk> {
    const auto it = set.find(kid);
    return it == set.end() ? nullptr : std::make_shared<const Jwk>(it->second);
  };
}

// The message verify_token refuses `token` with, or "ok".
std::string refusal(const std::string& token, TokenChecks c = checks()) {
  static const KeySet set = parse_jwks(test::jwks_of(rsa_key(), ec_key()), 64);
  try {
    verify_token(token, lookup_in(set), c, std::chrono::system_clock::now());
    return "ok";
  } catch (const TokenError& e) {
    return e.what();
  }
}

}  // namespace

TEST_CASE("jwt: base64url is strict") {
  CHECK(base64url_decode("") == std::string());
  CHECK(base64url_decode("YQ") == std::string("a"));
  CHECK(base64url_decode("YWI") == std::string("ab"));
  CHECK(base64url_decode("YWJj") == std::string("abc"));
  CHECK(base64url_decode("-_8") == std::string("\xfb\xff"));
  CHECK_FALSE(base64url_decode("YQ=="));  // padding
  CHECK_FALSE(base64url_decode("Y"));     // 1 mod 4
  CHECK_FALSE(base64url_decode("YR"));    // non-zero trailing bits
  CHECK_FALSE(base64url_decode("+/8"));   // the standard alphabet
  CHECK_FALSE(base64url_decode("YW J"));
  const std::string all = [] {
    std::string s;
    for (int i = 0; i < 256; ++i) s.push_back(static_cast<char>(i));
    return s;
  }();
  CHECK(base64url_decode(auth::base64url(all)) == all);
}

TEST_CASE("jwt: JWK Sets give RSA and P-256 keys and refuse malformed ones") {
  const auto set = parse_jwks(test::jwks_of(rsa_key(), ec_key()), 64);
  REQUIRE(set.size() == 2);
  CHECK(set.at("rsa-1").alg == Algorithm::rs256);
  CHECK(set.at("ec-1").alg == Algorithm::es256);

  auto error_of = [](const std::string& text, std::size_t max_keys = 64) {
    try {
      parse_jwks(text, max_keys);
      return std::string("no error");
    } catch (const JwksError& e) {
      return std::string(e.what());
    }
  };
  CHECK(error_of("not json").find("not JSON") != std::string::npos);
  CHECK(error_of(R"({"keys":{}})").find("\"keys\" array") != std::string::npos);
  CHECK(error_of(R"({"keys":[]})").find("no RS256 or ES256 signing key") != std::string::npos);
  CHECK(error_of(test::jwks_of(rsa_key(), ec_key()), 1).find("more than 1 keys") !=
        std::string::npos);
  // HMAC secrets and other algorithms are skipped, not used.
  CHECK(
      error_of(R"({"keys":[{"kty":"oct","kid":"h","k":"c2VjcmV0"}]})").find("no RS256 or ES256") !=
      std::string::npos);
  json::object short_rsa = TestKey::rsa("short", 1024).jwk();
  CHECK(error_of(json::serialize(json::object{{"keys", json::array{short_rsa}}}))
            .find("shorter than 2048 bits") != std::string::npos);
  json::object off_curve = ec_key().jwk();
  off_curve["y"] = off_curve["x"];  // (x, x) is not on P-256
  CHECK(error_of(json::serialize(json::object{{"keys", json::array{off_curve}}}))
            .find("kid \"ec-1\"") != std::string::npos);
  json::object bad_n = rsa_key().jwk();
  bad_n["n"] = "not base64url!";
  CHECK(error_of(json::serialize(json::object{{"keys", json::array{bad_n}}}))
            .find("\"n\" is not base64url") != std::string::npos);
  CHECK(error_of(
            json::serialize(json::object{{"keys", json::array{rsa_key().jwk(), rsa_key().jwk()}}}))
            .find("the kid appears twice") != std::string::npos);
}

TEST_CASE("jwt: good RS256 and ES256 tokens pass with their scopes") {
  static const KeySet set = parse_jwks(test::jwks_of(rsa_key(), ec_key()), 64);
  for (const TestKey* key : {&rsa_key(), &ec_key()}) {
    CAPTURE(key->alg);
    const auto verified = verify_token(test::sign_token(*key, claims()), lookup_in(set), checks(),
                                       std::chrono::system_clock::now());
    CHECK(verified.scopes == std::set<std::string>{"mcp", "classify"});
    CHECK(verified.subject == "router");
  }
  // aud as an array, scopes as scp, nbf in the past.
  const auto token =
      test::sign_token(ec_key(), claims({{"aud", json::array{"other", kResource}},
                                         {"scp", json::array{"a", "b"}},
                                         {"nbf", test::epoch_seconds(std::chrono::seconds(-10))}}));
  CHECK(refusal(token) == "ok");
  json::object no_scope = claims();
  no_scope.erase("scope");
  CHECK(verify_token(test::sign_token(rsa_key(), no_scope), lookup_in(set), checks(),
                     std::chrono::system_clock::now())
            .scopes.empty());
}

TEST_CASE("jwt: forged, unsigned and key-confused tokens are refused") {
  const std::string good = test::sign_token(rsa_key(), claims());
  // Forged: the payload changed after signing.
  const auto dot1 = good.find('.');
  const auto dot2 = good.find('.', dot1 + 1);
  const std::string forged_payload = auth::base64url(json::serialize(claims({{"scope", "admin"}})));
  const std::string forged = good.substr(0, dot1 + 1) + forged_payload + good.substr(dot2);
  CHECK(refusal(forged) == "the token's signature is invalid");
  // Signed by a key the server does not know, under a known kid.
  const TestKey stranger = TestKey::rsa("rsa-1");
  CHECK(refusal(test::sign_token(stranger, claims())) == "the token's signature is invalid");
  const TestKey ec_stranger = TestKey::ec("ec-1");
  CHECK(refusal(test::sign_token(ec_stranger, claims())) == "the token's signature is invalid");
  // alg none, with and without a signature.
  const std::string none_input = test::jws_input({{"alg", "none"}, {"kid", "rsa-1"}}, claims());
  CHECK(refusal(none_input + ".") == "the token's alg \"none\" is not accepted (RS256, ES256)");
  // HS256 with the public key's bytes as the HMAC secret (key confusion).
  const std::string modulus = rsa_key().param(OSSL_PKEY_PARAM_RSA_N);
  CHECK(refusal(test::hs256_token(modulus, claims(), "rsa-1")) ==
        "the token's alg \"HS256\" is not accepted (RS256, ES256)");
  // The right key but another algorithm named in the header.
  CHECK(refusal(test::sign_token(rsa_key(), claims(), {{"alg", "ES256"}})) ==
        "the token's alg does not match its key");
  // An ES256 signature of the wrong size.
  CHECK(refusal(good.substr(0, dot2) + "." + auth::base64url(std::string(63, 'x')), checks())
            .find("signature") != std::string::npos);
  const std::string es = test::sign_token(ec_key(), claims());
  CHECK(refusal(es.substr(0, es.rfind('.')) + "." + auth::base64url(std::string(63, 'x'))) ==
        "the ES256 signature is not 64 bytes");
  CHECK(refusal(test::sign_token(rsa_key(), claims(), {{"crit", json::array{"exp"}}})) ==
        "the token header has a \"crit\" parameter");
}

TEST_CASE("jwt: claims are checked: exp, nbf, iss, aud") {
  CHECK(refusal(test::sign_token(
            rsa_key(), claims({{"exp", test::epoch_seconds(std::chrono::seconds(-120))}}))) ==
        "the token has expired");
  // Within the leeway (60 s) an expired token still passes; with no leeway it does not.
  const auto just_expired =
      test::sign_token(rsa_key(), claims({{"exp", test::epoch_seconds(std::chrono::seconds(-5))}}));
  CHECK(refusal(just_expired) == "ok");
  auto strict = checks();
  strict.leeway = std::chrono::seconds(0);
  CHECK(refusal(just_expired, strict) == "the token has expired");
  json::object no_exp = claims();
  no_exp.erase("exp");
  CHECK(refusal(test::sign_token(rsa_key(), no_exp)) == "the token has no \"exp\" claim");
  CHECK(refusal(test::sign_token(rsa_key(), claims({{"exp", "tomorrow"}}))) ==
        "the \"exp\" claim is not a number");
  CHECK(refusal(test::sign_token(
            rsa_key(), claims({{"nbf", test::epoch_seconds(std::chrono::seconds(600))}}))) ==
        "the token is not valid yet (nbf)");
  CHECK(refusal(test::sign_token(rsa_key(), claims({{"iss", "https://evil.example"}}))) ==
        "the token's issuer is not the trusted authorization server");
  json::object no_iss = claims();
  no_iss.erase("iss");
  CHECK(refusal(test::sign_token(rsa_key(), no_iss)) ==
        "the token's issuer is not the trusted authorization server");
  CHECK(refusal(test::sign_token(rsa_key(), claims({{"aud", "https://other.example/mcp"}}))) ==
        "the token's audience is not this resource");
  CHECK(refusal(test::sign_token(rsa_key(), claims({{"aud", json::array{"x", 3}}}))) ==
        "the token's audience is not this resource");
  json::object no_aud = claims();
  no_aud.erase("aud");
  CHECK(refusal(test::sign_token(rsa_key(), no_aud)) == "the token has no \"aud\" claim");
  CHECK(refusal(test::sign_token(rsa_key(), claims({{"scope", 5}}))) ==
        "the \"scope\" claim is not a string");
}

TEST_CASE("jwt: malformed, oversized and kid-less tokens are refused") {
  CHECK(refusal("") == "the token is not a JWT (three dot-separated parts)");
  CHECK(refusal("a.b") == "the token is not a JWT (three dot-separated parts)");
  CHECK(refusal("a.b.c.d.e") == "the token is not a JWT (three dot-separated parts)");
  CHECK(refusal("!!.e30.") == "the token's header is not base64url");
  CHECK(refusal(auth::base64url("[1]") + ".e30.") == "the token's header is not a JSON object");
  CHECK(refusal(auth::base64url("{\"alg\":") + ".e30.") ==
        "the token's header is not a JSON object");
  CHECK(refusal(auth::base64url(std::string(40, '[')) + ".e30.") ==
        "the token's header is not a JSON object");  // deeper than the parser allows
  CHECK(refusal(test::sign_token(rsa_key(), claims(), {{"kid", "nobody"}})) ==
        "the token's kid is not a key of the authorization server");
  const std::string no_kid_input = test::jws_input({{"alg", "RS256"}}, claims());
  CHECK(refusal(no_kid_input + "." + auth::base64url(rsa_key().sign(no_kid_input))) ==
        "the token header has no \"kid\"");
  // A valid signature over a payload that is not JSON.
  const std::string header = auth::base64url(R"({"alg":"RS256","kid":"rsa-1"})");
  const std::string input = header + "." + auth::base64url("not json");
  CHECK(refusal(input + "." + auth::base64url(rsa_key().sign(input))) ==
        "the token's payload is not a JSON object");
  CHECK(refusal(header + ".e30.!!") == "the token's signature is not base64url");
  auto small = checks();
  small.max_token_bytes = 100;
  CHECK(refusal(test::sign_token(rsa_key(), claims()), small) ==
        "the token is longer than 100 bytes");
  CHECK(refusal(std::string(20'000, 'a')) == "the token is longer than 16384 bytes");
}

TEST_CASE("jwt: the validator's metadata, challenges, scopes and key file") {
  const std::string path = "/tmp/mcpclass_test_jwks_" + std::to_string(::getpid()) + ".json";
  std::ofstream(path) << test::jwks_of(ec_key());
  transport::server::JwtAuthOptions o;
  o.resource = kResource;
  o.issuer = kIssuer;
  o.jwks_file = path;
  o.required_scopes = {"mcp"};
  o.tool_scopes = {{"classify_text", {"classify"}}};
  const Validator v(o);
  CHECK(v.metadata_path() == "/.well-known/oauth-protected-resource/mcp");
  CHECK(v.metadata_url() == "https://mcp.example/.well-known/oauth-protected-resource/mcp");
  const auto doc = json::parse(v.metadata_json());
  CHECK(doc.at("resource") == json::value(kResource));
  CHECK(doc.at("authorization_servers") == json::array{kIssuer});
  CHECK(doc.at("scopes_supported") == json::array{"classify", "mcp"});
  CHECK(doc.at("bearer_methods_supported") == json::array{"header"});
  CHECK(
      v.unauthorized_challenge("") ==
      R"(Bearer resource_metadata="https://mcp.example/.well-known/oauth-protected-resource/mcp", scope="mcp")");
  CHECK(
      v.unauthorized_challenge("the token has \"expired\"")
          .ends_with(R"(, error="invalid_token", error_description="the token has \"expired\"")"));
  CHECK(v.scopes_for("classify_text") == std::vector<std::string>{"mcp", "classify"});
  CHECK(v.scopes_for("list_categories") == std::vector<std::string>{"mcp"});
  CHECK(
      v.insufficient_scope_challenge({"mcp", "classify"}) ==
      R"(Bearer error="insufficient_scope", scope="mcp classify", resource_metadata="https://mcp.example/.well-known/oauth-protected-resource/mcp")");
  CHECK(v.validate(test::sign_token(ec_key(), claims())) ==
        std::set<std::string>{"mcp", "classify"});
  CHECK_THROWS_WITH_AS(v.validate(test::sign_token(rsa_key(), claims())),
                       "the token's kid is not a key of the authorization server", TokenError);
  CHECK(v.keys().fetches() == 0);  // a file is read once, never fetched

  auto error_of = [](transport::server::JwtAuthOptions bad) {
    try {
      Validator{bad};
      return std::string("no error");
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
  };
  auto bad = o;
  bad.jwks_file = "/nonexistent/jwks.json";
  CHECK(error_of(bad) == "JWT: cannot read jwks_file '/nonexistent/jwks.json'");
  bad = o;
  bad.jwks_url = "https://auth.example/jwks";
  CHECK(error_of(bad) == "JWT: set exactly one of jwks_file and jwks_url");
  bad.jwks_file.clear();
  bad.jwks_url = "http://auth.example/jwks";
  CHECK(error_of(bad) == "JWT: jwks_url must be https:// (http:// only to a loopback host)");
  bad = o;
  bad.resource = "mcp.example/mcp";
  CHECK(error_of(bad).find("is not an absolute http(s) URL") != std::string::npos);
  bad = o;
  bad.issuer.clear();
  CHECK(error_of(bad) == "JWT: issuer must be set");
  std::ofstream(path) << "{\"keys\":[]}";
  CHECK(error_of(o).find("no RS256 or ES256 signing key") != std::string::npos);
  std::remove(path.c_str());
}
