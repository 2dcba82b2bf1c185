#include "route/digest.hpp"

#include <fmt/format.h>
#include <openssl/evp.h>

#include <memory>
#include <stdexcept>

namespace mcpclass::route {

std::string content_key(std::initializer_list<std::string_view> parts) {
  const std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(),
                                                                    &EVP_MD_CTX_free);
  bool ok = ctx && EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) == 1;
  for (const auto part : parts) {
    const std::string length = fmt::format("{}:", part.size());
    ok = ok && EVP_DigestUpdate(ctx.get(), length.data(), length.size()) == 1 &&
         EVP_DigestUpdate(ctx.get(), part.data(), part.size()) == 1;
  }
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  if (!ok || EVP_DigestFinal_ex(ctx.get(), digest, &size) != 1)
    throw std::runtime_error("SHA-256 failed (OpenSSL)");
  std::string out;
  out.reserve(2 * size);
  for (unsigned int i = 0; i < size; ++i) out += fmt::format("{:02x}", digest[i]);
  return out;
}

}  // namespace mcpclass::route
