// Client transports over HTTP: Streamable HTTP (the current MCP transport), legacy HTTP+SSE
// (2024-11-05) and the plain `POST <url>/<method>` dialect of the Semantic Router's Python
// example servers. http:// and https:// URLs: over HTTPS the server's certificate chain is
// verified (system trust store, or `ca_file`) and must name the URL's host (DNS name or IP
// address, SNI sent for names). A refused certificate fails the request with a TransportError
// whose message starts "TLS certificate verification failed for https://host:port: <reason>";
// there is no way to turn verification off.
// Thread-safety: as ClientTransport.
#pragma once

#include "mcpclass/auth/oauth.hpp"
#include "mcpclass/client/transport.hpp"
#include "mcpclass/util/limits.hpp"

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace mcpclass::transport::client {

struct HttpClientOptions {
  /// The endpoint: `http://host:port/mcp` (Streamable HTTP), `http://host:port/sse` (legacy),
  /// `http://host:port/mcp` (dialect: methods are appended as path segments); or https://.
  std::string url;
  /// https://: PEM file of the CAs to trust (a private CA, a self-signed server certificate)
  /// instead of the system's default trust store. start() throws TransportError when it cannot
  /// be read.
  std::string ca_file;
  /// Extra request headers, e.g. {"Authorization", "Bearer ${MCP_API_KEY}"}; `${NAME}` is
  /// replaced from the environment (see expand_env).
  std::map<std::string, std::string> headers;
  /// TCP connect plus TLS handshake.
  std::chrono::milliseconds connect_timeout{10'000};
  /// Deadline of exchanges that should be quick: notification and response POSTs, DELETE,
  /// waiting for the legacy `endpoint` event.
  std::chrono::milliseconds io_timeout{10'000};
  /// Largest message buffered from the server: a JSON body, or one SSE event. A larger one
  /// fails its request (or stream) with a TransportError naming this limit.
  std::size_t max_message_bytes = util::limits::kMaxClientMessageBytes;
  /// Largest response header block, chunk-size line (with its extensions) or trailer section
  /// buffered from the server; a larger one fails its request with a TransportError naming it.
  std::size_t max_header_bytes = util::limits::kMaxClientHeaderBytes;
  /// Streamable HTTP: open the GET stream for server-initiated messages after initialize.
  bool open_get_stream = true;
  /// Streamable HTTP: reconnect delay when the server gave no `retry:`.
  std::chrono::milliseconds default_retry{1'000};
  /// Streamable HTTP: reconnection attempts to resume one interrupted stream.
  int max_resume_attempts = 5;
  /// OAuth 2.1 authorization (see mcpclass/auth/oauth.hpp), Streamable HTTP and REST dialect:
  /// a 401 (or a 403 insufficient_scope) starts the authorization flow and the request is sent
  /// again with the token, which replaces any configured Authorization header. Flows run on a
  /// thread of their own; close() waits for one under way (an `authorize` callback included).
  /// A failed flow fails the request with auth::AuthorizationError ("authorization failed at
  /// <step> ...").
  std::optional<auth::OAuthOptions> oauth;
};

/// Streamable HTTP (2025-03-26 and later): POST with JSON or SSE answers, Mcp-Session-Id,
/// MCP-Protocol-Version (and Mcp-Method/Mcp-Name for 2026-07-28), the GET stream, resumption with
/// Last-Event-ID after the server's `retry` delay, DELETE on close. 200-JSON answers to
/// notifications are ignored; 400/404/405 on GET just mean "no GET stream".
std::shared_ptr<mcpclass::client::ClientTransport> make_streamable_http_transport(
    HttpClientOptions options);

/// Legacy HTTP+SSE: GET the SSE URL, wait for the `endpoint` event, POST messages there, read
/// every answer from the SSE stream. No OAuth: throws TransportError when options.oauth is set.
std::shared_ptr<mcpclass::client::ClientTransport> make_legacy_sse_transport(
    HttpClientOptions options);

/// The router dialect: each request is `POST <url>/<method>` with the params as body, and the
/// body of a 2xx answer is the bare result. Notifications and server→client requests do not
/// exist in this dialect (notifications are dropped).
std::shared_ptr<mcpclass::client::ClientTransport> make_rest_transport(HttpClientOptions options);

/// Replaces `${NAME}` with the environment variable NAME (empty when unset); `$$` is a literal
/// `$`. Throws std::invalid_argument for an unterminated `${`.
std::string expand_env(std::string_view text);

}  // namespace mcpclass::transport::client
