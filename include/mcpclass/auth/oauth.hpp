// OAuth 2.1 authorization for the HTTP client transports (MCP authorization, 2025-06-18 and
// 2025-11-25; the 2025-03-26 fallbacks included). When a transport has OAuthOptions and the MCP
// endpoint answers 401 (or 403 insufficient_scope), the transport discovers the authorization
// server (RFC 9728 protected resource metadata, RFC 8414 / OpenID Connect discovery), registers
// a client when none is configured (RFC 7591) or uses a client ID metadata document, obtains a
// token (authorization code + PKCE S256 with `resource` (RFC 8707), or client credentials),
// and sends the request again with `Authorization: Bearer`. Tokens live in memory, per transport.
// Thread-safety: OAuthOptions and AuthorizationError are plain values; headless_authorization is
// reentrant.
#pragma once

#include "mcpclass/client/errors.hpp"

#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace mcpclass::auth {

struct OAuthOptions {
  enum class Grant {
    authorization_code,  ///< a user (or a headless helper) approves at the authorization URL
    client_credentials,  ///< machine to machine: the client's own credentials buy the token
    /// Enterprise-managed (SEP-990): the user's ID token at the identity provider is exchanged
    /// (RFC 8693) for an identity assertion grant (ID-JAG), which the authorization server
    /// takes as a JWT bearer grant (RFC 7523).
    cross_app_access,
  };
  Grant grant = Grant::authorization_code;

  /// A pre-registered client; empty = client ID metadata document (when `client_metadata_url`
  /// is set and the server supports it), else dynamic client registration.
  std::string client_id;
  /// Secret of a pre-registered (or dynamically registered) confidential client.
  std::string client_secret;
  /// private_key_jwt (RFC 7523): PEM private key (EC P-256 for ES256, RSA for RS256) that signs
  /// the client assertion; when set, it is the token endpoint authentication.
  std::string private_key_pem;
  /// "ES256" or "RS256".
  std::string signing_algorithm = "ES256";
  /// Token endpoint authentication: "client_secret_basic", "client_secret_post", "none",
  /// "private_key_jwt"; empty = the first the server supports among those the client can do.
  std::string token_endpoint_auth_method;
  /// An HTTPS URL that is this client's ID metadata document (used as client_id when the server
  /// advertises client_id_metadata_document_supported).
  std::string client_metadata_url;

  /// cross_app_access: the identity provider's token endpoint, the user's ID token from it, and
  /// this client's ID there.
  std::string idp_token_endpoint;
  std::string idp_id_token;
  std::string idp_client_id;

  /// Scopes to request; empty = the challenge's `scope`, else the resource's scopes_supported,
  /// else none.
  std::string scope;
  /// Where the authorization server sends the user back with the code.
  std::string redirect_uri = "http://127.0.0.1:8976/callback";
  /// client_name for dynamic registration.
  std::string client_name = "mcpclass";

  /// Authorization code grant: opens `authorization_url` (a browser, a headless helper) and
  /// returns the URL the server redirected to (with `code` and `state`), or the bare code.
  /// Unset = headless_authorization.
  std::function<std::string(const std::string& authorization_url)> authorize;

  /// Refuse plain http:// metadata, authorization and token endpoints on hosts other than
  /// localhost / 127.0.0.0/8 / ::1 (the specification wants HTTPS; tokens and secrets travel
  /// there). False for private networks that run the authorization server without TLS.
  bool require_https = true;
  /// Authorization servers (issuer identifiers, e.g. "https://auth.example.com") this client
  /// may use; empty = whichever the resource names. The metadata of any server must name the
  /// issuer it was fetched for (RFC 8414 section 3.3), and its endpoints must be on the issuer's
  /// origin unless the issuer is listed here: credentials go nowhere else.
  std::vector<std::string> allowed_authorization_servers;

  /// Authorization flows one request may start (a 401, then each 403 insufficient_scope) before
  /// it fails; the bound stops endless loops with a server that never accepts the token.
  int max_attempts = 3;
  /// Deadline of each request to the authorization server or metadata endpoints.
  std::chrono::milliseconds timeout{10'000};
};

/// Authorization failed: which step (e.g. "token request"), the HTTP status (0 when none was
/// received) and the authorization server's `error` / `error_description` when it sent them.
class AuthorizationError : public client::TransportError {
 public:
  AuthorizationError(std::string step, int status, std::string error, std::string description);
  const std::string& step() const noexcept { return step_; }
  int status() const noexcept { return status_; }
  const std::string& error() const noexcept { return error_; }
  const std::string& description() const noexcept { return description_; }

 private:
  std::string step_;
  int status_;
  std::string error_;
  std::string description_;
};

/// For tests and servers that approve at once: GETs `authorization_url` without following
/// redirects and returns the `Location` of the redirect. Throws AuthorizationError when the
/// answer is not a redirect. `ca_file`: as HttpClientOptions::ca_file.
std::string headless_authorization(const std::string& authorization_url,
                                   std::chrono::milliseconds timeout = std::chrono::seconds(10),
                                   const std::string& ca_file = {});

}  // namespace mcpclass::auth
