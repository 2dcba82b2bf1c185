// Internal: one transport's OAuth state and flows: discovery, registration, the grants, the
// tokens. The transports ask it for the Authorization header and hand it the challenges they
// receive.
// Thread-safety: every member may be called from any thread except an HttpEngine I/O thread
// (flows block); flows are serialized, and a flow that finds the token already replaced since
// the challenge's request returns at once.
#pragma once

#include "auth/token_answer.hpp"
#include "mcpclass/auth/oauth.hpp"

#include <boost/json.hpp>

#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

namespace mcpclass::net {
class HttpEngine;
}

namespace mcpclass::auth {

class OAuthSession {
 public:
  /// `server_url`: the MCP endpoint (the protected resource). `connect_timeout`, `ca_file`: as
  /// the transport's.
  OAuthSession(OAuthOptions options, std::string server_url,
               std::chrono::milliseconds connect_timeout, std::string ca_file);
  ~OAuthSession();
  OAuthSession(const OAuthSession&) = delete;
  OAuthSession& operator=(const OAuthSession&) = delete;

  /// "Bearer <access token>", or empty before the first token.
  std::string authorization() const;

  /// Answers a 401 or 403 challenge (`www_authenticate` is the header) to a request sent with
  /// `sent_authorization`: refreshes or obtains a token. Throws AuthorizationError.
  void answer_challenge(int status, const std::string& www_authenticate,
                        const std::string& sent_authorization);

  /// Called before a request is sent, on the sender's thread: when the token has expired,
  /// refreshes it (or, with client credentials, obtains a new one) so that the request does not
  /// have to collect a 401 first. Failures are left to the 401 path.
  void renew_if_expired();

  /// Cancels the flow under way (it fails with an AuthorizationError) and every later one.
  void stop();

  const OAuthOptions& options() const { return options_; }

 private:
  struct Reply {
    int status = 0;
    std::string location;
    std::string body;
  };
  Reply http(const std::string& step, const std::string& method, const std::string& url,
             const std::string& content_type, const std::string& body,
             const std::string& authorization = {});
  void check_secure(const std::string& step, const std::string& url) const;
  std::optional<boost::json::object> get_json(const std::string& step, const std::string& url);

  void discover(const std::string& resource_metadata_url);
  void register_client();
  void authorization_code_flow(const std::string& scope);
  void client_credentials_flow(const std::string& scope);
  void cross_app_access_flow(const std::string& scope);
  bool refresh();
  void token_request(const std::string& step,
                     std::vector<std::pair<std::string, std::string>> fields);
  std::string choose_scope(const std::string& challenge_scope) const;
  std::string token_auth_method() const;
  std::string metadata_string(const char* key) const;
  /// Whether `issuer` is in options_.allowed_authorization_servers.
  bool listed(const std::string& issuer) const;
  void check_issuer(const std::string& issuer, const boost::json::object& metadata,
                    bool guessed) const;
  void store_token(TokenAnswer answer);

  const OAuthOptions options_;
  const std::string server_url_;
  std::unique_ptr<net::HttpEngine> engine_;

  std::mutex flow_mutex_;  // one flow at a time; guards the discovery and client state below
  bool discovered_ = false;
  std::string resource_;                 // RFC 8707 resource indicator
  boost::json::array resource_scopes_;   // PRM scopes_supported
  boost::json::object server_metadata_;  // authorization server metadata (or the defaults)
  std::string client_id_;
  std::string client_secret_;
  std::string registered_auth_method_;
  std::string tried_;  // discovery URLs that gave nothing, for the error message

  mutable std::mutex token_mutex_;
  std::string access_token_;
  std::string refresh_token_;
  std::optional<std::chrono::steady_clock::time_point> expires_at_;
  bool stopped_ = false;
};

}  // namespace mcpclass::auth
