// The HTTP transport's options from the configuration document's `server.http` section.
// A plain function; thread-safe.
#pragma once

#include "mcpclass/config/config.hpp"
#include "mcpclass/transport/http_server.hpp"

namespace mcpclass::config {

/// Host, port and every limit the document sets; the rest keep HttpServerOptions' defaults.
transport::HttpServerOptions http_server_options(const HttpSettings& http);

}  // namespace mcpclass::config
