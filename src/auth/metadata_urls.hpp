// Internal: where OAuth metadata is looked for, and the resource a token is asked for.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace mcpclass::auth {

/// The MCP server's URL as an RFC 8707 resource indicator: lower-case scheme and host, no
/// fragment, no query.
std::string canonical_resource(std::string_view server_url);

/// RFC 9728 well-known locations of the protected resource metadata of `server_url`: the
/// path-specific one first (`/.well-known/oauth-protected-resource/mcp`), then the root one.
std::vector<std::string> protected_resource_metadata_urls(std::string_view server_url);

/// The authorization server metadata locations in the order the MCP specification gives: for
/// an issuer with a path, RFC 8414 path insertion, OpenID Connect path insertion, OpenID
/// Connect path appending; for one without, RFC 8414 then OpenID Connect.
std::vector<std::string> authorization_server_metadata_urls(std::string_view issuer);

/// scheme://host[:port] of a URL.
std::string origin_of(std::string_view url);

/// True when the protected resource metadata's `resource` may stand for `server_url`: same
/// origin, and the server's path lies under the resource's path.
bool resource_covers(std::string_view resource, std::string_view server_url);

/// application/x-www-form-urlencoded body.
std::string form_encode(const std::vector<std::pair<std::string, std::string>>& fields);

/// `url` with the query parameters appended (percent-encoded).
std::string with_query(std::string_view url,
                       const std::vector<std::pair<std::string, std::string>>& params);

/// The first value of query parameter `name` in a URL (empty when absent).
std::string query_param(std::string_view url, std::string_view name);

}  // namespace mcpclass::auth
