#include "net/tls_context.hpp"

#include <fmt/format.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <boost/asio/ip/address.hpp>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>

namespace mcpclass::net {

namespace ssl = boost::asio::ssl;

namespace {

// A clear reason for a file OpenSSL would only call "system lib" or "no start line".
void require_readable(const std::string& file, const char* what) {
  if (file.empty()) throw std::runtime_error(fmt::format("TLS: the {} path is empty", what));
  std::ifstream in(file);
  if (!in) {
    throw std::runtime_error(
        fmt::format("TLS: cannot read the {} '{}': {}", what, file, std::strerror(errno)));
  }
}

[[noreturn]] void unusable(const std::string& file, const char* what,
                           const boost::system::error_code& ec) {
  throw std::runtime_error(
      fmt::format("TLS: '{}' is not a usable PEM {}: {}", file, what, ec.message()));
}

std::shared_ptr<ssl::context> tls12_context(ssl::context::method method) {
  auto context = std::make_shared<ssl::context>(method);
  context->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                       ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1);
  return context;
}

}  // namespace

void use_certificate_chain(ssl::context& context, const std::string& cert_file) {
  require_readable(cert_file, "certificate chain file");
  boost::system::error_code ec;
  context.use_certificate_chain_file(cert_file, ec);
  if (ec) unusable(cert_file, "certificate chain file", ec);
}

void use_private_key(ssl::context& context, const std::string& key_file,
                     const std::string& cert_file) {
  require_readable(key_file, "private key file");
  boost::system::error_code ec;
  context.use_private_key_file(key_file, ssl::context::pem, ec);
  if (ec) unusable(key_file, "private key file", ec);
  if (SSL_CTX_check_private_key(context.native_handle()) != 1) {
    ERR_clear_error();
    throw std::runtime_error(
        fmt::format("TLS: the private key file '{}' does not belong to the certificate in '{}'",
                    key_file, cert_file));
  }
}

std::shared_ptr<ssl::context> make_server_tls_context(const std::string& cert_file,
                                                      const std::string& key_file) {
  // Both readable before either is parsed: a missing key is reported as such, not as the
  // mismatch a half-built context would show.
  require_readable(cert_file, "certificate chain file");
  require_readable(key_file, "private key file");
  auto context = tls12_context(ssl::context::tls_server);
  use_certificate_chain(*context, cert_file);
  use_private_key(*context, key_file, cert_file);
  return context;
}

std::shared_ptr<ssl::context> make_client_tls_context(const std::string& ca_file) {
  auto context = tls12_context(ssl::context::tls_client);
  boost::system::error_code ec;
  if (ca_file.empty()) {
    context->set_default_verify_paths(ec);
    if (ec) {
      throw std::runtime_error(
          fmt::format("TLS: cannot use the system's trust store: {}", ec.message()));
    }
  } else {
    require_readable(ca_file, "CA file");
    context->load_verify_file(ca_file, ec);
    if (ec) unusable(ca_file, "CA file", ec);
  }
  context->set_verify_mode(ssl::verify_peer);
  return context;
}

void expect_peer_name(SSL* ssl, const std::string& host) {
  X509_VERIFY_PARAM* param = SSL_get0_param(ssl);
  boost::system::error_code ec;
  boost::asio::ip::make_address(host, ec);
  const bool ok = !ec ? X509_VERIFY_PARAM_set1_ip_asc(param, host.c_str()) == 1
                      : X509_VERIFY_PARAM_set1_host(param, host.c_str(), host.size()) == 1 &&
                            SSL_set_tlsext_host_name(ssl, host.c_str()) == 1;
  if (!ok) {
    ERR_clear_error();
    throw std::runtime_error(fmt::format("TLS: cannot expect the peer name '{}'", host));
  }
  X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
}

std::string tls_handshake_failure(SSL* ssl, const boost::system::error_code& ec,
                                  const std::string& url) {
  const long verdict = SSL_get_verify_result(ssl);
  if (verdict != X509_V_OK) {
    return fmt::format("TLS certificate verification failed for {}: {}", url,
                       X509_verify_cert_error_string(verdict));
  }
  return fmt::format("TLS handshake with {} failed: {}", url, ec.message());
}

bool peer_certificate_refused(SSL* ssl) {
  return SSL_get_verify_result(ssl) != X509_V_OK;
}

}  // namespace mcpclass::net
