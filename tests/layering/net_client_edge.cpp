// A deliberate back-edge: the HTTP client engine (net) including the MCP client's errors, the
// edge net had until it got its own typed error (HttpClientError). It must not compile as part
// of net (layering.compile_refuses_net_client) and the check must name it
// (layering.check_names_net_client).
#include "mcpclass/client/errors.hpp"

int mcpclass_layering_net_client_edge() {
  return 0;
}
