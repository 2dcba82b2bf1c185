// A deliberate back-edge: the classify layer including the MCP engine. It must not compile as
// part of classify (layering.compile_refuses_back_edge) and the check must name it
// (layering.check_names_back_edge).
#include "mcpclass/server/server.hpp"

int mcpclass_layering_back_edge() {
  return 0;
}
