// The HTTP transport's options from the configuration document's `server.http` section.
// A plain function; thread-safe.
#pragma once

#include "mcpclass/config/config.hpp"
#include "mcpclass/transport/server/http_server.hpp"

namespace mcpclass::service {

/// Host, port and every limit the document sets; the rest keep HttpServerOptions' defaults.
transport::HttpServerOptions http_server_options(const config::HttpSettings& http);

}  // namespace mcpclass::service
