// The HTTP transport's options from the configuration document's `server.http` section.
// A plain function; thread-safe.
#pragma once

#include "mcpclass/config/config.hpp"
#include "mcpclass/transport/server/http_server.hpp"

namespace mcpclass::service {

/// Host, port, access rules and every limit the document sets; the rest keep HttpServerOptions'
/// defaults. Resolves the bearer tokens: "${NAME}" from the environment, and the lines of
/// bearer_tokens_file. Throws config::ConfigError naming the key when a variable is unset or
/// empty, or the file cannot be read or holds no token.
transport::HttpServerOptions http_server_options(const config::HttpSettings& http);

}  // namespace mcpclass::service
