// The configuration document's `server.http` section, read by the transport itself into the
// options it documents (HttpServerOptions, JwtAuthOptions): each setting is declared once, there.
// Thread-safety: a plain function (it reads the environment and a token file when resolving).
#pragma once

#include "mcpclass/transport/server/http_server.hpp"

#include <boost/json/object.hpp>

#include <string>

namespace mcpclass::transport::server {

/// The port a document without `server.http.port` serves on. (HttpServerOptions::port itself
/// defaults to 0, a free port, for embedders.)
inline constexpr unsigned short kConfigHttpPort = 8090;

/// What to do with the secrets the section names.
enum class HttpSecrets {
  /// Check them only: "${NAME}" stays as written and bearer_tokens_file is not read (loading
  /// and printing a document never needs the secrets).
  as_written,
  /// "${NAME}" from the environment, and the lines of bearer_tokens_file appended to
  /// bearer_tokens ('#' lines and blanks skipped).
  resolved,
};

/// Reads `section` (the `server.http` object; `path` prefixes the key paths in errors) on top of
/// HttpServerOptions' defaults, except `port` (kConfigHttpPort). The document's shape differs
/// from the struct's in names only where the document nests: `tls: {cert_file, key_file}` are
/// tls_cert_file/tls_key_file; `auth: {allowed_hosts, allowed_origins, bearer_tokens,
/// bearer_tokens_file, allow_unauthenticated, jwt}`; in `jwt`, `audience` (a string or a list) is
/// audiences and `scopes: {default, tools}` are required_scopes/tool_scopes. Durations are
/// seconds in the document. Unknown keys, wrong types and values out of range throw
/// util::ConfigError naming the key, as do an unset "${NAME}" and an unreadable or empty
/// bearer_tokens_file (with HttpSecrets::resolved).
HttpServerOptions read_http_server_options(const boost::json::object& section,
                                           const std::string& path = "server.http",
                                           HttpSecrets secrets = HttpSecrets::resolved);

}  // namespace mcpclass::transport::server
