// JWS verification with OpenSSL's EVP_DigestVerify: RS256 is RSASSA-PKCS1-v1_5 with SHA-256;
// ES256 carries the raw r||s of RFC 7518 §3.4, which OpenSSL reads only as DER.
#include "transport/server/jwt/token.hpp"

#include "transport/server/jwt/base64url.hpp"

#include <openssl/bn.h>
#include <openssl/ecdsa.h>
#include <openssl/evp.h>

#include <boost/json.hpp>

#include <cmath>
#include <memory>

namespace mcpclass::transport::server::jwt {

namespace json = boost::json;

namespace {

[[noreturn]] void refuse(const std::string& why) {
  throw TokenError(TokenError::Kind::invalid, why);
}

json::object decode_object(std::string_view part, const char* what) {
  const auto bytes = base64url_decode(part);
  if (!bytes) refuse(std::string("the token's ") + what + " is not base64url");
  boost::system::error_code ec;
  json::parse_options limits;
  limits.max_depth = 16;
  json::value v = json::parse(*bytes, ec, {}, limits);
  if (ec || !v.is_object()) refuse(std::string("the token's ") + what + " is not a JSON object");
  return std::move(v.get_object());
}

// r||s (32 bytes each) → the DER ECDSA-Sig-Value OpenSSL verifies.
std::string es256_der(std::string_view raw) {
  if (raw.size() != 64) refuse("the ES256 signature is not 64 bytes");
  const auto* p = reinterpret_cast<const unsigned char*>(raw.data());
  std::unique_ptr<ECDSA_SIG, decltype(&ECDSA_SIG_free)> sig(ECDSA_SIG_new(), ECDSA_SIG_free);
  BIGNUM* r = BN_bin2bn(p, 32, nullptr);
  BIGNUM* s = BN_bin2bn(p + 32, 32, nullptr);
  if (!sig || !r || !s || ECDSA_SIG_set0(sig.get(), r, s) != 1) {
    BN_free(r);
    BN_free(s);
    refuse("the ES256 signature cannot be read");
  }
  const int len = i2d_ECDSA_SIG(sig.get(), nullptr);
  if (len <= 0) refuse("the ES256 signature cannot be read");
  std::string der(static_cast<std::size_t>(len), '\0');
  auto* out = reinterpret_cast<unsigned char*>(der.data());
  i2d_ECDSA_SIG(sig.get(), &out);
  return der;
}

bool signature_ok(const Jwk& key, std::string_view signed_part, std::string_view signature) {
  const std::string der = key.alg == Algorithm::es256 ? es256_der(signature) : std::string();
  const std::string_view sig = key.alg == Algorithm::es256 ? std::string_view(der) : signature;
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  if (!ctx || EVP_DigestVerifyInit_ex(ctx.get(), nullptr, "SHA256", nullptr, nullptr, key.key.get(),
                                      nullptr) != 1)
    return false;
  return EVP_DigestVerify(ctx.get(), reinterpret_cast<const unsigned char*>(sig.data()), sig.size(),
                          reinterpret_cast<const unsigned char*>(signed_part.data()),
                          signed_part.size()) == 1;
}

// A NumericDate (seconds since the epoch; RFC 7519 allows fractions).
std::optional<double> numeric_date(const json::object& claims, std::string_view key) {
  const json::value* v = claims.if_contains(key);
  if (!v) return std::nullopt;
  if (!v->is_number()) refuse("the \"" + std::string(key) + "\" claim is not a number");
  const double d = v->to_number<double>();
  if (!std::isfinite(d)) refuse("the \"" + std::string(key) + "\" claim is not a number");
  return d;
}

void check_audience(const json::object& claims, const std::vector<std::string>& accepted) {
  const json::value* aud = claims.if_contains("aud");
  auto ok = [&](const json::value& v) {
    if (!v.is_string()) return false;
    for (const auto& a : accepted)
      if (v.get_string() == a) return true;
    return false;
  };
  if (!aud) refuse("the token has no \"aud\" claim");
  if (aud->is_array()) {
    for (const auto& v : aud->get_array())
      if (ok(v)) return;
  } else if (ok(*aud)) {
    return;
  }
  refuse("the token's audience is not this resource");
}

std::set<std::string> scopes_of(const json::object& claims) {
  std::set<std::string> scopes;
  auto split = [&](std::string_view s) {
    while (!s.empty()) {
      const auto space = s.find(' ');
      if (space != 0) scopes.emplace(s.substr(0, space));
      if (space == std::string_view::npos) break;
      s.remove_prefix(space + 1);
    }
  };
  if (const json::value* scope = claims.if_contains("scope")) {
    if (!scope->is_string()) refuse("the \"scope\" claim is not a string");
    split(scope->get_string());
  }
  if (const json::value* scp = claims.if_contains("scp")) {
    if (scp->is_string()) {
      split(scp->get_string());
    } else if (scp->is_array()) {
      for (const auto& s : scp->get_array()) {
        if (!s.is_string()) refuse("the \"scp\" claim holds a value that is not a string");
        scopes.emplace(s.get_string());
      }
    } else {
      refuse("the \"scp\" claim is not an array of strings");
    }
  }
  return scopes;
}

}  // namespace

VerifiedToken verify_token(std::string_view token, const KeyLookup& keys, const TokenChecks& checks,
                           std::chrono::system_clock::time_point now) {
  if (token.size() > checks.max_token_bytes)
    refuse("the token is longer than " + std::to_string(checks.max_token_bytes) + " bytes");
  const auto dot1 = token.find('.');
  const auto dot2 = dot1 == std::string_view::npos ? dot1 : token.find('.', dot1 + 1);
  if (dot2 == std::string_view::npos || token.find('.', dot2 + 1) != std::string_view::npos)
    refuse("the token is not a JWT (three dot-separated parts)");
  const std::string_view signed_part = token.substr(0, dot2);
  const json::object header = decode_object(token.substr(0, dot1), "header");

  const json::value* alg_value = header.if_contains("alg");
  if (!alg_value || !alg_value->is_string()) refuse("the token header has no \"alg\"");
  const std::string alg_name(alg_value->get_string());
  const auto alg = algorithm_named(alg_name);
  if (!alg)
    refuse("the token's alg \"" + alg_name.substr(0, 32) + "\" is not accepted (RS256, ES256)");
  if (header.contains("crit")) refuse("the token header has a \"crit\" parameter");
  const json::value* kid_value = header.if_contains("kid");
  if (!kid_value || !kid_value->is_string()) refuse("the token header has no \"kid\"");
  const std::string_view kid = kid_value->get_string();
  const auto key = keys(kid);
  if (!key) refuse("the token's kid is not a key of the authorization server");
  if (key->alg != *alg) refuse("the token's alg does not match its key");

  const auto signature = base64url_decode(token.substr(dot2 + 1));
  if (!signature) refuse("the token's signature is not base64url");
  if (!signature_ok(*key, signed_part, *signature)) refuse("the token's signature is invalid");

  const json::object claims = decode_object(token.substr(dot1 + 1, dot2 - dot1 - 1), "payload");
  const json::value* iss = claims.if_contains("iss");
  if (!iss || !iss->is_string() || iss->get_string() != checks.issuer)
    refuse("the token's issuer is not the trusted authorization server");
  check_audience(claims, checks.audiences);
  const double t = std::chrono::duration<double>(now.time_since_epoch()).count();
  const auto leeway = static_cast<double>(checks.leeway.count());
  const auto exp = numeric_date(claims, "exp");
  if (!exp) refuse("the token has no \"exp\" claim");
  if (t >= *exp + leeway) refuse("the token has expired");
  if (const auto nbf = numeric_date(claims, "nbf"); nbf && t < *nbf - leeway)
    refuse("the token is not valid yet (nbf)");

  VerifiedToken verified;
  verified.scopes = scopes_of(claims);
  if (const json::value* sub = claims.if_contains("sub"); sub && sub->is_string())
    verified.subject = std::string(sub->get_string());
  return verified;
}

}  // namespace mcpclass::transport::server::jwt
