// Internal: the OpenSSL pieces the HTTP server, the HTTP client transports and the route's Redis
// connections share: building a server or client context from PEM files (a client's own
// certificate too), naming the peer a client expects, and saying why a client handshake failed.
// Thread-safety: a context is built once and then only read (shared by connections).
#pragma once

#include <boost/asio/ssl/context.hpp>
#include <boost/system/error_code.hpp>

#include <memory>
#include <string>

namespace mcpclass::net {

/// TLS 1.2 or later with the PEM certificate chain (leaf first) and the PEM private key that
/// belongs to it. Throws std::runtime_error naming the file that is missing, unreadable or does
/// not match.
std::shared_ptr<boost::asio::ssl::context> make_server_tls_context(const std::string& cert_file,
                                                                   const std::string& key_file);

/// Presents the PEM certificate chain in `cert_file` (leaf first) with the PEM private key in
/// `key_file` (a server's, or a client certificate for a peer that asks for one). Throws
/// std::runtime_error naming the file that is missing, unreadable or does not match.
void use_certificate_chain(boost::asio::ssl::context& context, const std::string& cert_file);
void use_private_key(boost::asio::ssl::context& context, const std::string& key_file,
                     const std::string& cert_file);

/// TLS 1.2 or later that verifies the peer's certificate chain against the CAs in `ca_file`
/// (PEM) or, when it is empty, the system's default trust store. Throws std::runtime_error naming
/// the file.
std::shared_ptr<boost::asio::ssl::context> make_client_tls_context(const std::string& ca_file);

/// Makes the handshake on `ssl` check that the peer's certificate names `host` (a DNS name or an
/// IP literal) and sends `host` as SNI when it is a DNS name. Throws std::runtime_error.
void expect_peer_name(SSL* ssl, const std::string& host);

/// Why a client handshake on `ssl` failed, for `url`: "TLS certificate verification failed for
/// <url>: <reason>" when the peer's certificate was refused, else "TLS handshake with <url>
/// failed: <reason>".
std::string tls_handshake_failure(SSL* ssl, const boost::system::error_code& ec,
                                  const std::string& url);

/// True when the handshake on `ssl` failed because the peer's certificate was refused (unknown
/// CA, another host name, expired), rather than the connection or the protocol.
bool peer_certificate_refused(SSL* ssl);

}  // namespace mcpclass::net
