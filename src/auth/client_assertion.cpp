#include "auth/client_assertion.hpp"

#include "auth/pkce.hpp"
#include "mcpclass/auth/oauth.hpp"

#include <openssl/bio.h>
#include <openssl/ecdsa.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <boost/json.hpp>

#include <chrono>
#include <memory>
#include <vector>

namespace mcpclass::auth {

namespace {

[[noreturn]] void fail(const std::string& why) {
  throw AuthorizationError("client assertion", 0, "invalid_client_key", why);
}

struct KeyDeleter {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
using Key = std::unique_ptr<EVP_PKEY, KeyDeleter>;

Key read_key(const std::string& pem) {
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(
      BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())), &BIO_free);
  if (!bio) fail("out of memory");
  Key key(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
  if (!key) fail("private_key_pem is not a PEM private key");
  return key;
}

std::string sign_sha256(EVP_PKEY* key, const std::string& input) {
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
  std::size_t len = 0;
  if (!ctx || EVP_DigestSignInit(ctx.get(), nullptr, EVP_sha256(), nullptr, key) != 1 ||
      EVP_DigestSign(ctx.get(), nullptr, &len, reinterpret_cast<const unsigned char*>(input.data()),
                     input.size()) != 1)
    fail("signing failed");
  std::string sig(len, '\0');
  if (EVP_DigestSign(ctx.get(), reinterpret_cast<unsigned char*>(sig.data()), &len,
                     reinterpret_cast<const unsigned char*>(input.data()), input.size()) != 1)
    fail("signing failed");
  sig.resize(len);
  return sig;
}

/// JWS wants ECDSA signatures as r || s, 32 bytes each for P-256; OpenSSL gives DER.
std::string der_to_raw_p256(const std::string& der) {
  const auto* p = reinterpret_cast<const unsigned char*>(der.data());
  std::unique_ptr<ECDSA_SIG, decltype(&ECDSA_SIG_free)> sig(
      d2i_ECDSA_SIG(nullptr, &p, static_cast<long>(der.size())), &ECDSA_SIG_free);
  if (!sig) fail("unexpected ECDSA signature encoding");
  std::string raw(64, '\0');
  auto* out = reinterpret_cast<unsigned char*>(raw.data());
  if (BN_bn2binpad(ECDSA_SIG_get0_r(sig.get()), out, 32) != 32 ||
      BN_bn2binpad(ECDSA_SIG_get0_s(sig.get()), out + 32, 32) != 32)
    fail("ECDSA signature does not fit P-256");
  return raw;
}

}  // namespace

std::string make_client_assertion(const std::string& private_key_pem, const std::string& algorithm,
                                  const std::string& client_id, const std::string& audience) {
  const bool es256 = algorithm == "ES256";
  if (!es256 && algorithm != "RS256")
    fail("signing_algorithm '" + algorithm + "' is not supported (ES256, RS256)");
  auto key = read_key(private_key_pem);
  const int type = EVP_PKEY_get_base_id(key.get());
  if (es256 && (type != EVP_PKEY_EC || EVP_PKEY_get_bits(key.get()) != 256))
    fail("ES256 needs an EC P-256 private key");
  if (!es256 && type != EVP_PKEY_RSA) fail("RS256 needs an RSA private key");

  const auto now = std::chrono::duration_cast<std::chrono::seconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count();
  const boost::json::object header{{"alg", algorithm}, {"typ", "JWT"}};
  const boost::json::object claims{{"iss", client_id}, {"sub", client_id},
                                   {"aud", audience},  {"iat", now},
                                   {"exp", now + 300}, {"jti", random_token(16)}};
  const std::string input =
      base64url(boost::json::serialize(header)) + "." + base64url(boost::json::serialize(claims));
  std::string sig = sign_sha256(key.get(), input);
  if (es256) sig = der_to_raw_p256(sig);
  return input + "." + base64url(sig);
}

}  // namespace mcpclass::auth
