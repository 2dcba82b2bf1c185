// A deliberate back-edge: the routing proxy including the service layer, the detour route took
// for resolve_env_reference (now util/env_reference.hpp). The check must name it
// (layering.check_names_route_service).
#include "mcpclass/service/classification_service.hpp"

int mcpclass_layering_route_service_edge() {
  return 0;
}
