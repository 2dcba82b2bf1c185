// JWK → EVP_PKEY with OpenSSL 3's EVP_PKEY_fromdata: OpenSSL is already a dependency (TLS), and
// the Debian packages of JOSE libraries (cjose, libjwt) would add one for two algorithms.
#include "transport/server/jwt/jwk.hpp"

#include "transport/server/jwt/base64url.hpp"

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/param_build.h>

#include <boost/json.hpp>

#include <optional>

namespace mcpclass::transport::server::jwt {

namespace json = boost::json;

namespace {

constexpr int kMinRsaBits = 2048;
constexpr std::size_t kMaxRsaBytes = 1024;  // 8192-bit moduli at most
constexpr std::size_t kMaxExponentBytes = 8;

template <class T, void (*Free)(T*)>
struct Deleter {
  void operator()(T* p) const { Free(p); }
};
using BnPtr = std::unique_ptr<BIGNUM, Deleter<BIGNUM, BN_free>>;
using BldPtr = std::unique_ptr<OSSL_PARAM_BLD, Deleter<OSSL_PARAM_BLD, OSSL_PARAM_BLD_free>>;
using ParamPtr = std::unique_ptr<OSSL_PARAM, Deleter<OSSL_PARAM, OSSL_PARAM_free>>;
using CtxPtr = std::unique_ptr<EVP_PKEY_CTX, Deleter<EVP_PKEY_CTX, EVP_PKEY_CTX_free>>;

[[noreturn]] void fail(const std::string& where, const std::string& what) {
  throw JwksError("JWK Set: " + where + ": " + what);
}

std::optional<std::string> string_member(const json::object& o, std::string_view key,
                                         const std::string& where) {
  const json::value* v = o.if_contains(key);
  if (!v) return std::nullopt;
  if (!v->is_string()) fail(where, "\"" + std::string(key) + "\" is not a string");
  return std::string(v->get_string());
}

// A base64url field of a key, decoded; absent, empty or not base64url is an error.
std::string bytes_member(const json::object& o, std::string_view key, const std::string& where) {
  const auto text = string_member(o, key, where);
  if (!text || text->empty()) fail(where, "\"" + std::string(key) + "\" is missing");
  auto bytes = base64url_decode(*text);
  if (!bytes) fail(where, "\"" + std::string(key) + "\" is not base64url");
  return std::move(*bytes);
}

std::shared_ptr<EVP_PKEY> from_params(const char* type, OSSL_PARAM_BLD* bld,
                                      const std::string& where) {
  ParamPtr params(OSSL_PARAM_BLD_to_param(bld));
  CtxPtr ctx(EVP_PKEY_CTX_new_from_name(nullptr, type, nullptr));
  EVP_PKEY* key = nullptr;
  if (!params || !ctx || EVP_PKEY_fromdata_init(ctx.get()) <= 0 ||
      EVP_PKEY_fromdata(ctx.get(), &key, EVP_PKEY_PUBLIC_KEY, params.get()) <= 0 || !key)
    fail(where, "OpenSSL refused the key");
  std::shared_ptr<EVP_PKEY> owned(key, EVP_PKEY_free);
  // fromdata does not check that an EC point lies on the curve; this does.
  CtxPtr check(EVP_PKEY_CTX_new_from_pkey(nullptr, key, nullptr));
  if (!check || EVP_PKEY_public_check(check.get()) <= 0) fail(where, "the public key is invalid");
  return owned;
}

std::shared_ptr<EVP_PKEY> rsa_key(const json::object& o, const std::string& where) {
  const std::string n = bytes_member(o, "n", where);
  const std::string e = bytes_member(o, "e", where);
  if (n.size() > kMaxRsaBytes) fail(where, "the RSA modulus is longer than 8192 bits");
  if (e.size() > kMaxExponentBytes) fail(where, "the RSA exponent is too long");
  BnPtr bn_n(BN_bin2bn(reinterpret_cast<const unsigned char*>(n.data()), static_cast<int>(n.size()),
                       nullptr));
  BnPtr bn_e(BN_bin2bn(reinterpret_cast<const unsigned char*>(e.data()), static_cast<int>(e.size()),
                       nullptr));
  if (!bn_n || !bn_e) fail(where, "out of memory");
  if (BN_num_bits(bn_n.get()) < kMinRsaBits)
    fail(where, "the RSA modulus is shorter than 2048 bits");
  if (BN_is_odd(bn_e.get()) == 0 || BN_is_one(bn_e.get()))
    fail(where, "the RSA exponent is not an odd number above 1");
  BldPtr bld(OSSL_PARAM_BLD_new());
  if (!bld || OSSL_PARAM_BLD_push_BN(bld.get(), OSSL_PKEY_PARAM_RSA_N, bn_n.get()) <= 0 ||
      OSSL_PARAM_BLD_push_BN(bld.get(), OSSL_PKEY_PARAM_RSA_E, bn_e.get()) <= 0)
    fail(where, "out of memory");
  return from_params("RSA", bld.get(), where);
}

std::shared_ptr<EVP_PKEY> p256_key(const json::object& o, const std::string& where) {
  const std::string x = bytes_member(o, "x", where);
  const std::string y = bytes_member(o, "y", where);
  if (x.size() != 32 || y.size() != 32) fail(where, "P-256 coordinates must be 32 bytes each");
  std::string point = "\x04" + x + y;  // the uncompressed SEC 1 encoding
  BldPtr bld(OSSL_PARAM_BLD_new());
  static char kGroup[] = "prime256v1";
  if (!bld ||
      OSSL_PARAM_BLD_push_utf8_string(bld.get(), OSSL_PKEY_PARAM_GROUP_NAME, kGroup, 0) <= 0 ||
      OSSL_PARAM_BLD_push_octet_string(bld.get(), OSSL_PKEY_PARAM_PUB_KEY, point.data(),
                                       point.size()) <= 0)
    fail(where, "out of memory");
  return from_params("EC", bld.get(), where);
}

}  // namespace

std::optional<Algorithm> algorithm_named(std::string_view name) {
  if (name == "RS256") return Algorithm::rs256;
  if (name == "ES256") return Algorithm::es256;
  return std::nullopt;
}

std::string_view algorithm_name(Algorithm alg) {
  return alg == Algorithm::rs256 ? "RS256" : "ES256";
}

KeySet parse_jwks(std::string_view text, std::size_t max_keys) {
  boost::system::error_code ec;
  json::parse_options limits;
  limits.max_depth = 8;
  const json::value doc = json::parse(text, ec, {}, limits);
  if (ec) fail("document", "not JSON (" + ec.message() + ")");
  const json::object* root = doc.if_object();
  const json::value* keys = root ? root->if_contains("keys") : nullptr;
  if (!keys || !keys->is_array()) fail("document", "not an object with a \"keys\" array");
  const json::array& list = keys->get_array();
  if (list.size() > max_keys) fail("document", "more than " + std::to_string(max_keys) + " keys");
  KeySet set;
  for (std::size_t i = 0; i < list.size(); ++i) {
    std::string where = "keys[" + std::to_string(i) + "]";
    const json::object* o = list[i].if_object();
    if (!o) fail(where, "not an object");
    const auto kty = string_member(*o, "kty", where);
    if (!kty) fail(where, "\"kty\" is missing");
    const auto kid = string_member(*o, "kid", where).value_or("");
    if (!kid.empty()) where += " (kid \"" + kid.substr(0, 64) + "\")";
    const auto use = string_member(*o, "use", where);
    if (use && *use != "sig") continue;  // an encryption key
    const auto alg_name = string_member(*o, "alg", where);
    std::optional<Algorithm> alg;
    std::shared_ptr<EVP_PKEY> key;
    if (*kty == "RSA") {
      if (alg_name && *alg_name != "RS256") continue;  // RS384, PS256, ...: not accepted here
      alg = Algorithm::rs256;
      key = rsa_key(*o, where);
    } else if (*kty == "EC") {
      const auto crv = string_member(*o, "crv", where);
      if (!crv || *crv != "P-256" || (alg_name && *alg_name != "ES256")) continue;
      alg = Algorithm::es256;
      key = p256_key(*o, where);
    } else {
      continue;  // oct (HMAC secrets have no place in a public key set), OKP, ...
    }
    if (!set.emplace(kid, Jwk{kid, *alg, std::move(key)}).second)
      fail(where, "the kid appears twice");
  }
  if (set.empty()) fail("document", "no RS256 or ES256 signing key");
  return set;
}

}  // namespace mcpclass::transport::server::jwt
