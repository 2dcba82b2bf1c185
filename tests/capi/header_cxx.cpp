// The public header compiled as C++ (-Wall -Wextra -Wpedantic -Werror): extern "C", no C-only
// constructs. Compiling is the test.
#include "mcpclass/mcpclass.h"

#include <type_traits>

static_assert(std::is_trivial_v<mcpc_result> && std::is_standard_layout_v<mcpc_result>);
static_assert(std::is_trivial_v<mcpc_decision> && std::is_standard_layout_v<mcpc_decision>);
static_assert(std::is_trivial_v<mcpc_category> && std::is_standard_layout_v<mcpc_category>);
static_assert(MCPC_VERSION_NUMBER ==
              MCPC_VERSION_MAJOR * 10000 + MCPC_VERSION_MINOR * 100 + MCPC_VERSION_PATCH);

int mcpc_header_cxx_check();
int mcpc_header_cxx_check() {
  mcpc_error* err = nullptr;
  return mcpc_error_code(err) + MCPC_ABI_VERSION;
}
