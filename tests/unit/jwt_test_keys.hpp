// Test helper: signing keys made with OpenSSL in the test, their JWKs, and JWTs signed with them
// (RS256, ES256, or HS256 for the tests that must be refused).
// Thread-safety: a TestKey is immutable after construction; the functions are reentrant.
#pragma once

#include "auth/pkce.hpp"

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ecdsa.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <boost/json.hpp>

#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>

namespace mcpclass::test {

struct TestKey {
  std::string kid;
  std::string alg;  ///< "RS256" or "ES256"
  std::shared_ptr<EVP_PKEY> key;

  static TestKey rsa(std::string kid, unsigned bits = 2048) {
    EVP_PKEY* k = EVP_PKEY_Q_keygen(nullptr, nullptr, "RSA", static_cast<size_t>(bits));
    if (!k) throw std::runtime_error("RSA keygen failed");
    return {std::move(kid), "RS256", std::shared_ptr<EVP_PKEY>(k, EVP_PKEY_free)};
  }
  static TestKey ec(std::string kid) {
    EVP_PKEY* k = EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256");
    if (!k) throw std::runtime_error("EC keygen failed");
    return {std::move(kid), "ES256", std::shared_ptr<EVP_PKEY>(k, EVP_PKEY_free)};
  }

  /// A big-number parameter of the key, big-endian, left-padded to `width` bytes (0 = as is).
  std::string param(const char* name, int width = 0) const {
    BIGNUM* bn = nullptr;
    if (EVP_PKEY_get_bn_param(key.get(), name, &bn) != 1) throw std::runtime_error(name);
    const int n = width > 0 ? width : BN_num_bytes(bn);
    std::string out(static_cast<std::size_t>(n), '\0');
    BN_bn2binpad(bn, reinterpret_cast<unsigned char*>(out.data()), n);
    BN_free(bn);
    return out;
  }

  /// The public JWK.
  boost::json::object jwk() const {
    if (alg == "RS256")
      return {{"kty", "RSA"},
              {"kid", kid},
              {"use", "sig"},
              {"alg", "RS256"},
              {"n", auth::base64url(param(OSSL_PKEY_PARAM_RSA_N))},
              {"e", auth::base64url(param(OSSL_PKEY_PARAM_RSA_E))}};
    return {{"kty", "EC"},
            {"kid", kid},
            {"use", "sig"},
            {"crv", "P-256"},
            {"x", auth::base64url(param(OSSL_PKEY_PARAM_EC_PUB_X, 32))},
            {"y", auth::base64url(param(OSSL_PKEY_PARAM_EC_PUB_Y, 32))}};
  }

  /// The JWS signature of `input` in JOSE form (ES256: raw r||s).
  std::string sign(std::string_view input) const {
    std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
    if (EVP_DigestSignInit_ex(ctx.get(), nullptr, "SHA256", nullptr, nullptr, key.get(), nullptr) !=
        1)
      throw std::runtime_error("DigestSignInit");
    std::size_t len = 0;
    const auto* in = reinterpret_cast<const unsigned char*>(input.data());
    EVP_DigestSign(ctx.get(), nullptr, &len, in, input.size());
    std::string sig(len, '\0');
    if (EVP_DigestSign(ctx.get(), reinterpret_cast<unsigned char*>(sig.data()), &len, in,
                       input.size()) != 1)
      throw std::runtime_error("DigestSign");
    sig.resize(len);
    if (alg == "RS256") return sig;
    const auto* p = reinterpret_cast<const unsigned char*>(sig.data());
    ECDSA_SIG* es = d2i_ECDSA_SIG(nullptr, &p, static_cast<long>(sig.size()));
    std::string raw(64, '\0');
    BN_bn2binpad(ECDSA_SIG_get0_r(es), reinterpret_cast<unsigned char*>(raw.data()), 32);
    BN_bn2binpad(ECDSA_SIG_get0_s(es), reinterpret_cast<unsigned char*>(raw.data() + 32), 32);
    ECDSA_SIG_free(es);
    return raw;
  }
};

/// A JWK Set of `keys`, as text.
template <class... Keys>
std::string jwks_of(const Keys&... keys) {
  boost::json::array list;
  (list.emplace_back(keys.jwk()), ...);
  return boost::json::serialize(boost::json::object{{"keys", std::move(list)}});
}

/// header.payload, base64url-encoded.
inline std::string jws_input(const boost::json::object& header,
                             const boost::json::object& payload) {
  return auth::base64url(boost::json::serialize(header)) + "." +
         auth::base64url(boost::json::serialize(payload));
}

/// A token signed by `key` with its alg and kid (the header may be overridden by `header`).
inline std::string sign_token(const TestKey& key, const boost::json::object& payload,
                              boost::json::object header = {}) {
  if (!header.contains("alg")) header["alg"] = key.alg;
  if (!header.contains("kid")) header["kid"] = key.kid;
  if (!header.contains("typ")) header["typ"] = "at+jwt";
  const std::string input = jws_input(header, payload);
  return input + "." + auth::base64url(key.sign(input));
}

/// An HS256 token whose HMAC secret is `secret` (the key confusion attack uses public key bytes).
inline std::string hs256_token(std::string_view secret, const boost::json::object& payload,
                               const std::string& kid) {
  const std::string input = jws_input({{"alg", "HS256"}, {"kid", kid}}, payload);
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned len = 0;
  HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
       reinterpret_cast<const unsigned char*>(input.data()), input.size(), mac, &len);
  return input + "." + auth::base64url(std::string(reinterpret_cast<char*>(mac), len));
}

/// Seconds since the epoch, `offset` from now.
inline std::int64_t epoch_seconds(std::chrono::seconds offset = std::chrono::seconds(0)) {
  return std::chrono::duration_cast<std::chrono::seconds>(
             (std::chrono::system_clock::now() + offset).time_since_epoch())
      .count();
}

}  // namespace mcpclass::test
