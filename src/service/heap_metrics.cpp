#include "service/heap_metrics.hpp"

#include <fmt/format.h>

#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
#include <malloc.h>
#define MCPCLASS_HAVE_MALLINFO2 1
#endif

namespace mcpclass::service {

std::string heap_metrics() {
#ifdef MCPCLASS_HAVE_MALLINFO2
  const struct mallinfo2 m = ::mallinfo2();
  return fmt::format(
      "# HELP mcpclass_heap_in_use_bytes Heap bytes allocated and not freed (glibc mallinfo2).\n"
      "# TYPE mcpclass_heap_in_use_bytes gauge\n"
      "mcpclass_heap_in_use_bytes {}\n"
      "# HELP mcpclass_heap_reserved_bytes Heap bytes obtained from the system, in use or free.\n"
      "# TYPE mcpclass_heap_reserved_bytes gauge\n"
      "mcpclass_heap_reserved_bytes {}\n",
      m.uordblks + m.hblkhd, m.arena + m.hblkhd);
#else
  return {};
#endif
}

}  // namespace mcpclass::service
